/**
 * The journeys through the token API (Django REST framework's token auth, under /api/), as a
 * script or an app with an API client uses it: POST /api/auth-token/ with the credentials for a
 * key, `Authorization: Token <key>` on every call, DELETE /api/auth-token/ to be rid of it. The
 * answers are DRF's shapes (a status, field errors, a `detail`); this driver names what they mean
 * in the scenarios' words.
 *
 * The token API has no signup, no password reset, no email management and no password change: a
 * person with an API client does those on the site. So this driver holds a browser on the same
 * site (a pages driver on the same Latchkey) for what the person does there, and says, operation
 * by operation, whether it goes to the site or is simply not offered by this door.
 */
import type { LightMyRequestResponse } from 'fastify';
import { INVALID_TOKEN } from '../../http/api/authentication.js';
import { NOT_AUTHENTICATED } from '../../http/api/respond.js';
import { INCORRECT_CODE } from '../../mfa/flows/authenticate.js';
import { TOKEN_CODE_REQUIRED, TOKEN_EMAIL_UNVERIFIED, TOKEN_INVALID_CREDENTIALS } from '../../tokens/flows/obtain-token.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews } from '../api.js';
import type { TestLatchkey } from '../latchkey.js';
import { openPagesDriver } from './pages-driver.js';
import { refused, type JourneyDriver, type ListedEmail, type OpenedDriver, type Outcome, type SignupDetails } from './driver.js';

const AUTH_TOKEN = '/api/auth-token/';
/** A view of the project's own API that needs a user (registerTestApiViews): who the key belongs to. */
const WHOAMI = '/api/whoami/';

function unexpected(what: string, response: LightMyRequestResponse): Error {
  return new Error(`token api: ${what} answered ${response.statusCode}: ${response.body}`);
}

function fieldMessages(response: LightMyRequestResponse): Record<string, unknown> {
  try {
    return response.json<Record<string, unknown>>();
  } catch {
    return {};
  }
}

/** Whether the 400's field `field` says exactly `message` (DRF's field errors are lists of messages). */
function says(body: Record<string, unknown>, field: string, message: string): boolean {
  const messages = body[field];
  return Array.isArray(messages) && messages.length === 1 && messages[0] === message;
}

/**
 * What an answer of POST /api/auth-token/ means. Each refusal is matched on its exact message,
 * so that a door that starts answering something else fails the journey instead of being read
 * as the nearest outcome.
 */
function obtainOutcome(what: string, response: LightMyRequestResponse): { outcome: Outcome; key?: string } {
  if (response.statusCode === 200) {
    const { token } = response.json<{ token?: unknown }>();
    if (typeof token !== 'string' || token === '') throw unexpected(what, response);
    return { outcome: 'signed_in', key: token };
  }
  if (response.statusCode === 429) return { outcome: refused('rate_limited') };
  if (response.statusCode !== 400) throw unexpected(what, response);
  const body = fieldMessages(response);
  if (says(body, 'non_field_errors', TOKEN_INVALID_CREDENTIALS)) return { outcome: refused('invalid_credentials') };
  if (says(body, 'non_field_errors', TOKEN_EMAIL_UNVERIFIED.id)) return { outcome: 'verify_email' };
  if (says(body, 'code', TOKEN_CODE_REQUIRED.id)) return { outcome: 'mfa_required' };
  if (says(body, 'code', INCORRECT_CODE.id)) return { outcome: refused('incorrect_code') };
  throw unexpected(what, response);
}

/** The 401s a request with a dead key, or with none, is answered with (DRF's two messages). */
function isNotAuthenticated(response: LightMyRequestResponse): boolean {
  if (response.statusCode !== 401) return false;
  const { detail } = fieldMessages(response);
  return detail === INVALID_TOKEN || detail === NOT_AUTHENTICATED;
}

function notOffered(operation: string, instead: string): Error {
  return new Error(`token api: ${operation} is not offered by this door (${instead}).`);
}

class TokenDriver implements JourneyDriver {
  readonly name = 'token api';
  /** The key this client holds: the last one the endpoint answered, kept until it answers another. */
  private key: string | undefined;
  /**
   * The credentials of a login stopped for its second factor. A token client has no pending login
   * on the server to come back to: DRF's endpoint takes the code along with the username and the
   * password, so the client sends all three again.
   */
  private awaitingCode: { login: string; password: string } | undefined;

  constructor(
    private readonly client: ApiTestClient,
    /** This person's browser on the same site, for what the token API leaves to the site. */
    private readonly site: JourneyDriver,
  ) {}

  another(options: { ip?: string } = {}): JourneyDriver {
    return new TokenDriver(this.client.another(options), this.site.another(options));
  }

  private async obtain(what: string, fields: Record<string, string>): Promise<Outcome> {
    const { outcome, key } = obtainOutcome(what, await this.client.request('POST', AUTH_TOKEN, { json: fields }));
    if (key !== undefined) this.key = key;
    return outcome;
  }

  /** Signing up is done on the site: the token API has none, and a token login follows it. */
  signup(details: SignupDetails): Promise<Outcome> {
    return this.site.signup(details);
  }

  async login(login: string, password: string): Promise<Outcome> {
    // DRF's field is `username` whatever the login is: an address goes in it too.
    const outcome = await this.obtain('login', { username: login, password });
    this.awaitingCode = outcome === 'mfa_required' ? { login, password } : undefined;
    return outcome;
  }

  /**
   * The same request again with the code. A wrong code or a rate limit leaves the credentials at
   * hand for the next try, as the other doors keep the login waiting; a token ends the wait, and
   * so does a refusal of the credentials themselves. A code with no login waiting cannot be sent
   * at all: the endpoint takes no code without credentials.
   */
  async submitCode(code: string): Promise<Outcome> {
    const waiting = this.awaitingCode;
    if (!waiting) throw new Error('token api: a code is sent with the username and password of a login, and no login waits for one here.');
    const outcome = await this.obtain('login with a code', { username: waiting.login, password: waiting.password, code });
    if (outcome !== refused('incorrect_code') && outcome !== refused('rate_limited')) this.awaitingCode = undefined;
    return outcome;
  }

  /** The mailed link opens in a browser: confirming is done on the site. */
  confirmEmail(key: string): Promise<Outcome> {
    return this.site.confirmEmail(key);
  }

  /**
   * Who the key held here belongs to, as the project's own API sees it. Asked even with no key
   * (DRF answers 401), so that "not signed in" is always the door's answer, not the driver's.
   */
  async currentUser(): Promise<string | null> {
    const response = await this.client.request('GET', WHOAMI, this.key === undefined ? {} : { token: this.key });
    if (isNotAuthenticated(response)) return null;
    const { username } = fieldMessages(response);
    if (response.statusCode !== 200 || typeof username !== 'string') throw unexpected('whoami', response);
    return username;
  }

  /**
   * Deletes the token the client holds: 204. A client holding no key, or a key already deleted
   * (here, or by another client of the same user: there is one token per user), is answered 401;
   * either way the person is signed out, which is what they see. Anything else fails the journey.
   *
   * The client keeps the dead key, as a client that ignores the answer would: the next
   * currentUser() then proves the server deleted it, rather than the driver forgetting it.
   */
  async logout(): Promise<Outcome> {
    const response = await this.client.request('DELETE', AUTH_TOKEN, this.key === undefined ? {} : { token: this.key });
    if (response.statusCode === 204 || isNotAuthenticated(response)) return 'signed_out';
    throw unexpected('logout', response);
  }

  /**
   * A reset is asked for and set on the site, from the mail, and the next token login must
   * honour it: a real journey across two doors.
   */
  requestPasswordReset(email: string): Promise<Outcome> {
    return this.site.requestPasswordReset(email);
  }

  resetPassword(key: string, password: string): Promise<Outcome> {
    return this.site.resetPassword(key, password);
  }

  /**
   * Not offered. A person changes their password on the site while signed in there, but this
   * driver signs in only through the token API, so its browser has no session to change it from;
   * sending it there would read as refused('not_signed_in'), a door's answer nobody gave.
   */
  changePassword(): Promise<Outcome> {
    return Promise.reject(notOffered('changing the password', 'it is done on the site, signed in there'));
  }

  /** Not offered: a token does not age (it lives until deleted), so there is nothing to renew. */
  reauthenticate(): Promise<Outcome> {
    return Promise.reject(notOffered('reauthentication', 'a token has no recent-login window to renew'));
  }

  /** Not offered, as changePassword: email management is the site's, for a person signed in there. */
  addEmail(): Promise<Outcome> {
    return Promise.reject(notOffered('adding an address', 'email management is on the site, signed in there'));
  }

  removeEmail(): Promise<Outcome> {
    return Promise.reject(notOffered('removing an address', 'email management is on the site, signed in there'));
  }

  makePrimary(): Promise<Outcome> {
    return Promise.reject(notOffered('choosing the primary address', 'email management is on the site, signed in there'));
  }

  listEmails(): Promise<ListedEmail[]> {
    return Promise.reject(notOffered('listing the addresses', 'email management is on the site, signed in there'));
  }
}

/**
 * The token API of a fresh app on this Latchkey (with the project's /api/whoami/ view), as one
 * client, and the site's pages (an app of their own on the same Latchkey: same accounts, mail and
 * clock) for what the person does there.
 */
export async function openTokenDriver(latchkey: TestLatchkey): Promise<OpenedDriver> {
  const app = await createApiTestApp(latchkey, { routes: registerTestApiViews });
  try {
    const site = await openPagesDriver(latchkey);
    return {
      driver: new TokenDriver(new ApiTestClient(app, latchkey), site.driver),
      close: async () => {
        await site.close();
        await app.close();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}
