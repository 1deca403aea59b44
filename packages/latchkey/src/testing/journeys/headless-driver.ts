/**
 * The journeys through the headless API, as a single-page app (the `browser` client: cookies and
 * X-CSRFToken) or a mobile app (the `app` client: X-Session-Token) calls it, following allauth's
 * published contract. Every response is checked against the contract by HeadlessTestClient; this
 * driver reads the status, the flows of a 401 and the error codes, and names what they mean in
 * the scenarios' words.
 */
import type { TestLatchkey } from '../latchkey.js';
import { HeadlessTestClient, type HeadlessResponse } from '../headless.js';
import { refused, type JourneyDriver, type ListedEmail, type OpenedDriver, type Outcome, type RefusalCode, type SignupDetails } from './driver.js';

/** allauth's error codes (and Latchkey's own) in the scenarios' words. */
const REFUSAL_BY_CODE: Record<string, RefusalCode> = {
  username_password_mismatch: 'invalid_credentials',
  email_password_mismatch: 'invalid_credentials',
  incorrect_password: 'invalid_credentials',
  invalid_credentials: 'invalid_credentials',
  too_many_requests: 'rate_limited',
  rate_limited: 'rate_limited',
  incorrect_code: 'incorrect_code',
  email_taken: 'email_taken',
  username_taken: 'username_taken',
  signup_closed: 'signup_closed',
  token_invalid: 'invalid_key',
  invalid_key: 'invalid_key',
};

interface Flow {
  id: string;
  is_pending?: boolean;
}

function unexpected(what: string, response: HeadlessResponse): Error {
  return new Error(`headless: ${what} answered ${response.status}: ${JSON.stringify(response.body)}`);
}

function pendingFlow(response: HeadlessResponse): string | undefined {
  const flows = (response.body.data as { flows?: Flow[] } | undefined)?.flows ?? [];
  return flows.find((flow) => flow.is_pending === true)?.id;
}

function isAuthenticated(response: HeadlessResponse): boolean {
  return (response.body.meta as { is_authenticated?: boolean } | undefined)?.is_authenticated === true;
}

/** A 400, 403 or 429 in the contract's error shape, named by its code. */
function refusal(what: string, response: HeadlessResponse): Outcome {
  if (response.status === 429) return refused('rate_limited');
  if (response.status === 403) return refused('signup_closed');
  const error = response.body.errors?.[0];
  if (response.status !== 400 || !error) throw unexpected(what, response);
  const byCode = REFUSAL_BY_CODE[error.code];
  if (byCode) return refused(byCode);
  // An invalid key is reported on the `key` field (allauth's code there is a plain `invalid`).
  if (error.param === 'key') return refused('invalid_key');
  return refused('invalid_input');
}

/**
 * What an answer from a login-like route means: 200 signed in; 401 with a pending flow, the
 * stage the login waits at; 401 for a signed-in user, a reauthentication; 410 or a plain 401,
 * not signed in; 400 for an inactive account names it; anything else is a refusal.
 */
function authenticationOutcome(what: string, response: HeadlessResponse, verifyEmail: 'verify_email' | 'verification_sent' = 'verify_email'): Outcome {
  if (response.status === 200 && isAuthenticated(response)) return 'signed_in';
  if (response.status === 401) {
    if (isAuthenticated(response)) return 'reauthentication_required';
    const pending = pendingFlow(response);
    if (pending === 'verify_email') return verifyEmail;
    if (pending === 'mfa_authenticate') return 'mfa_required';
    return refused('not_signed_in');
  }
  if (response.status === 410) return refused('not_signed_in');
  if (response.status === 400 && response.body.errors?.[0]?.code === 'account_inactive') return 'inactive';
  return refusal(what, response);
}

/** A change to a signed-in account: 200 done, 401 not signed in or not recently enough. */
function changeOutcome(what: string, response: HeadlessResponse, accepted: Outcome): Outcome {
  if (response.status === 200) return accepted;
  if (response.status === 401 || response.status === 410) return authenticationOutcome(what, response);
  return refusal(what, response);
}

class HeadlessDriver implements JourneyDriver {
  readonly name: string;

  constructor(private readonly client: HeadlessTestClient) {
    this.name = `headless ${client.kind}`;
  }

  another(options: { ip?: string } = {}): JourneyDriver {
    return new HeadlessDriver(this.client.another(this.client.kind, options));
  }

  async signup(details: SignupDetails): Promise<Outcome> {
    const response = await this.client.post('/auth/signup', { email: details.email, username: details.username, password: details.password });
    return authenticationOutcome('signup', response, 'verification_sent');
  }

  async login(login: string, password: string): Promise<Outcome> {
    // The contract's login names the identifier by kind: an address goes in `email`.
    const body = login.includes('@') ? { email: login, password } : { username: login, password };
    return authenticationOutcome('login', await this.client.post('/auth/login', body));
  }

  async submitCode(code: string): Promise<Outcome> {
    return authenticationOutcome('2fa code', await this.client.post('/auth/2fa/authenticate', { code }));
  }

  /**
   * The front end first asks what the key is for (GET with the key in a header), then confirms
   * it. Confirming while signed in, or where no login waits for it, confirms and signs nobody in.
   */
  async confirmEmail(key: string): Promise<Outcome> {
    const signedInBefore = (await this.currentUser()) !== null;
    const info = await this.client.get('/auth/email/verify', { headers: { 'x-email-verification-key': key } });
    if (info.status !== 200) return refusal('email verification info', info);
    const response = await this.client.post('/auth/email/verify', { key });
    if (response.status === 200 && signedInBefore) return 'email_confirmed';
    if (response.status === 401 && pendingFlow(response) === undefined) return 'email_confirmed';
    return authenticationOutcome('email verification', response);
  }

  async currentUser(): Promise<string | null> {
    const response = await this.client.get('/auth/session');
    if (response.status === 200) return (response.body.data as { user: { username: string } }).user.username;
    if (response.status === 401 || response.status === 410) return null;
    throw unexpected('session', response);
  }

  async logout(): Promise<Outcome> {
    const response = await this.client.delete('/auth/session');
    // The app's token is dead after a logout: a second logout with it is answered 410.
    if (response.status === 401 || response.status === 410) return 'signed_out';
    throw unexpected('logout', response);
  }

  async requestPasswordReset(email: string): Promise<Outcome> {
    const response = await this.client.post('/auth/password/request', { email });
    return response.status === 200 ? 'reset_requested' : refusal('password reset request', response);
  }

  async resetPassword(key: string, password: string): Promise<Outcome> {
    const info = await this.client.get('/auth/password/reset', { headers: { 'x-password-reset-key': key } });
    if (info.status !== 200) return refusal('password reset info', info);
    const response = await this.client.post('/auth/password/reset', { key, password });
    // 401: the password is reset and the person goes on to log in (as the pages send them to).
    if (response.status === 401 && pendingFlow(response) === undefined) return 'password_reset';
    return authenticationOutcome('password reset', response);
  }

  /** A change that may need a recent authentication (a stale session is answered 401 with the reauthentication flows). */
  private change(method: 'POST' | 'PATCH' | 'DELETE', path: string, body: unknown): Promise<HeadlessResponse> {
    return this.client.request(method, path, body);
  }

  async changePassword(oldPassword: string, newPassword: string): Promise<Outcome> {
    const response = await this.change('POST', '/account/password/change', { current_password: oldPassword, new_password: newPassword });
    return changeOutcome('password change', response, 'password_changed');
  }

  async reauthenticate(password: string): Promise<Outcome> {
    return changeOutcome('reauthentication', await this.client.post('/auth/reauthenticate', { password }), 'reauthenticated');
  }

  async addEmail(email: string): Promise<Outcome> {
    return changeOutcome('add email', await this.change('POST', '/account/email', { email }), 'email_added');
  }

  async removeEmail(email: string): Promise<Outcome> {
    return changeOutcome('remove email', await this.change('DELETE', '/account/email', { email }), 'email_removed');
  }

  async makePrimary(email: string): Promise<Outcome> {
    return changeOutcome('make primary', await this.change('PATCH', '/account/email', { email, primary: true }), 'primary_changed');
  }

  async listEmails(): Promise<ListedEmail[]> {
    const response = await this.client.get('/account/email');
    if (response.status !== 200) throw unexpected('list emails', response);
    return (response.body.data as ListedEmail[]).map(({ email, verified, primary }) => ({ email, verified, primary }));
  }
}

/** The headless API of a fresh app on this Latchkey, as one client of this kind. */
export async function openHeadlessDriver(latchkey: TestLatchkey, kind: 'browser' | 'app'): Promise<OpenedDriver> {
  const app = await HeadlessTestClient.createApp(latchkey);
  return { driver: new HeadlessDriver(new HeadlessTestClient(app, kind, latchkey)), close: () => app.close() };
}
