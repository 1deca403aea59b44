/**
 * The journeys through the HTML pages under /accounts/, as a browser submits their forms (with
 * the CSRF token a browser would read from the page). The pages answer with redirects, pages
 * that show form errors, and statuses; this driver reads those the way a person reads the screen
 * and names what they mean in the scenarios' words.
 */
import type { LightMyRequestResponse } from 'fastify';
import { INVALID_CREDENTIALS, INVALID_EMAIL_CREDENTIALS, TOO_MANY_ATTEMPTS } from '../../account/credentials.js';
import { ALREADY_YOURS } from '../../account/flows/manage-email.js';
import { WRONG_CURRENT_PASSWORD } from '../../account/flows/password-change.js';
import { INCORRECT_PASSWORD } from '../../account/flows/reauthenticate.js';
import { EMAIL_TAKEN, SIGNUP_CLOSED, USERNAME_TAKEN } from '../../account/flows/signup.js';
import { INCORRECT_CODE } from '../../mfa/flows/authenticate.js';
import type { TestLatchkey } from '../latchkey.js';
import { PageClient } from '../pages.js';
import { refused, type JourneyDriver, type ListedEmail, type OpenedDriver, type Outcome, type RefusalCode, type SignupDetails } from './driver.js';

/** Form errors by their words (in English): the pages show messages, not codes. */
const REFUSAL_BY_MESSAGE: [string, RefusalCode][] = [
  [INVALID_CREDENTIALS.id, 'invalid_credentials'],
  [INVALID_EMAIL_CREDENTIALS.id, 'invalid_credentials'],
  [WRONG_CURRENT_PASSWORD.id, 'invalid_credentials'],
  [INCORRECT_PASSWORD.id, 'invalid_credentials'],
  [TOO_MANY_ATTEMPTS, 'rate_limited'],
  [INCORRECT_CODE.id, 'incorrect_code'],
  [EMAIL_TAKEN.id, 'email_taken'],
  [ALREADY_YOURS.id, 'email_taken'],
  [USERNAME_TAKEN.id, 'username_taken'],
  [SIGNUP_CLOSED.id, 'signup_closed'],
];

function unescapeHtml(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&#x27;', "'")
    .replaceAll('&amp;', '&');
}

/** The messages the page shows in its error lists. */
function formErrors(html: string): string[] {
  const errors: string[] = [];
  for (const list of html.matchAll(/<ul class="lk-errors"[^>]*>([\s\S]*?)<\/ul>/g)) {
    for (const item of list[1]!.matchAll(/<li>([\s\S]*?)<\/li>/g)) errors.push(unescapeHtml(item[1]!.trim()));
  }
  return errors;
}

function unexpected(what: string, response: LightMyRequestResponse): Error {
  const location = response.headers.location === undefined ? '' : ` → ${String(response.headers.location)}`;
  const errors = formErrors(response.body);
  return new Error(`pages: ${what} answered ${response.statusCode}${location}${errors.length > 0 ? ` with errors ${JSON.stringify(errors)}` : ''}`);
}

/** A page that refused the form: the status and the error shown name the reason. */
function refusal(what: string, response: LightMyRequestResponse): Outcome {
  if (response.statusCode === 429) return refused('rate_limited');
  if (response.statusCode !== 400 && response.statusCode !== 403) throw unexpected(what, response);
  const errors = formErrors(response.body);
  for (const [message, code] of REFUSAL_BY_MESSAGE) if (errors.some((error) => error.includes(message))) return refused(code);
  if (response.statusCode === 403 && response.body.includes('Sign up closed')) return refused('signup_closed');
  if (errors.length > 0) return refused('invalid_input');
  throw unexpected(what, response);
}

function location(response: LightMyRequestResponse): string | undefined {
  return response.statusCode === 302 || response.statusCode === 303 ? String(response.headers.location) : undefined;
}

/** Where a login lands: the site, the code page, the inactive page, or the "verify your address" page. */
function loginOutcome(what: string, response: LightMyRequestResponse): Outcome {
  const to = location(response);
  if (to === '/') return 'signed_in';
  if (to === '/accounts/2fa/authenticate/') return 'mfa_required';
  if (to === '/accounts/inactive/') return 'inactive';
  if (to === '/accounts/confirm-email/') return 'verification_sent';
  if (response.statusCode === 200 && response.body.includes('<h1>Verify your email address</h1>')) return 'verify_email';
  if (to !== undefined) throw unexpected(what, response);
  return refusal(what, response);
}

/** A form that, when accepted, redirects to `done`; a signed-in-only page sends strangers to login. */
function formOutcome(what: string, response: LightMyRequestResponse, done: string, accepted: Outcome): Outcome {
  const to = location(response);
  if (to === done) return accepted;
  if (to?.startsWith('/accounts/reauthenticate/')) return 'reauthentication_required';
  if (to?.startsWith('/accounts/login/')) return refused('not_signed_in');
  if (to !== undefined) throw unexpected(what, response);
  return refusal(what, response);
}

const EMAIL_PAGE = '/accounts/email/';

class PagesDriver implements JourneyDriver {
  readonly name = 'pages';

  constructor(
    private readonly browser: PageClient,
    private readonly latchkey: TestLatchkey,
  ) {}

  another(options: { ip?: string } = {}): JourneyDriver {
    return new PagesDriver(this.browser.another(options), this.latchkey);
  }

  async signup(details: SignupDetails): Promise<Outcome> {
    const response = await this.browser.post('/accounts/signup/', { email: details.email, username: details.username, password1: details.password, password2: details.password });
    return loginOutcome('signup', response);
  }

  async login(login: string, password: string): Promise<Outcome> {
    return loginOutcome('login', await this.browser.post('/accounts/login/', { login, password }));
  }

  async submitCode(code: string): Promise<Outcome> {
    const response = await this.browser.post('/accounts/2fa/authenticate/', { code });
    // The code page sends a browser with no login waiting for a code back to the login page.
    if (location(response) === '/accounts/login/') return refused('not_signed_in');
    return loginOutcome('2fa code', response);
  }

  async confirmEmail(key: string): Promise<Outcome> {
    const response = await this.browser.post(`/accounts/confirm-email/${encodeURIComponent(key)}/`, {});
    if (response.statusCode === 404) return refused('invalid_key');
    const to = location(response);
    // Back to the email page (signed in already) or to the login page: confirmed, nobody signed in here.
    if (to === EMAIL_PAGE || to === '/accounts/login/') return 'email_confirmed';
    return loginOutcome('email confirmation', response);
  }

  /**
   * Who this browser is signed in as: a page for signed-in users opens (rather than sending the
   * browser to the login page), and its session names the user (the pages never print the username).
   */
  async currentUser(): Promise<string | null> {
    const page = await this.browser.get(EMAIL_PAGE);
    const session = await this.latchkey.deps.sessions.load(this.browser.cookies.get(this.latchkey.settings.SESSION_COOKIE_NAME));
    const user = session?.userId == null ? undefined : await this.latchkey.deps.store.users.findById(session.userId);
    const signedIn = page.statusCode === 200;
    if (signedIn !== (user?.isActive === true)) throw new Error(`pages: the email page answered ${page.statusCode} but the session names ${user?.username ?? 'nobody'}`);
    return signedIn ? (user?.username ?? null) : null;
  }

  async logout(): Promise<Outcome> {
    const response = await this.browser.post('/accounts/logout/', {});
    if (location(response) !== '/') throw unexpected('logout', response);
    return 'signed_out';
  }

  async requestPasswordReset(email: string): Promise<Outcome> {
    return formOutcome('password reset request', await this.browser.post('/accounts/password/reset/', { email }), '/accounts/password/reset/done/', 'reset_requested');
  }

  async resetPassword(key: string, password: string): Promise<Outcome> {
    // The mailed link moves the key into the session and sends the browser on to the form.
    const link = await this.browser.get(`/accounts/password/reset/key/${encodeURIComponent(key)}/`);
    const form = location(link);
    if (form === undefined) {
      if (link.statusCode === 200 && link.body.includes('request a new password reset')) return refused('invalid_key');
      throw unexpected('password reset link', link);
    }
    const response = await this.browser.post(form, { password1: password, password2: password });
    if (response.statusCode === 400 && response.body.includes('request a new password reset')) return refused('invalid_key');
    return formOutcome('password reset', response, '/accounts/password/reset/key/done/', 'password_reset');
  }

  async changePassword(oldPassword: string, newPassword: string): Promise<Outcome> {
    const response = await this.browser.post('/accounts/password/change/', { oldpassword: oldPassword, password1: newPassword, password2: newPassword });
    return formOutcome('password change', response, '/accounts/password/change/', 'password_changed');
  }

  async reauthenticate(password: string): Promise<Outcome> {
    return formOutcome('reauthentication', await this.browser.post('/accounts/reauthenticate/', { password }), '/', 'reauthenticated');
  }

  private async emailAction(action: 'action_add' | 'action_remove' | 'action_primary', email: string, accepted: Outcome): Promise<Outcome> {
    return formOutcome(action, await this.browser.post(EMAIL_PAGE, { email, [action]: '' }), EMAIL_PAGE, accepted);
  }

  addEmail(email: string): Promise<Outcome> {
    return this.emailAction('action_add', email, 'email_added');
  }

  removeEmail(email: string): Promise<Outcome> {
    return this.emailAction('action_remove', email, 'email_removed');
  }

  makePrimary(email: string): Promise<Outcome> {
    return this.emailAction('action_primary', email, 'primary_changed');
  }

  /** The rows of the email page's table: the address, and "Verified"/"Unverified" with ", primary". */
  async listEmails(): Promise<ListedEmail[]> {
    const page = await this.browser.get(EMAIL_PAGE);
    if (page.statusCode !== 200) throw unexpected('email page', page);
    const rows = [...page.body.matchAll(/<label for="email_radio_\d+">([^<]*)<\/label>\s*<\/td>\s*<td>\s*([^<]*?)\s*<\/td>/g)];
    return rows.map((row) => {
      const status = row[2]!;
      return { email: unescapeHtml(row[1]!), verified: status.startsWith('Verified'), primary: status.includes('primary') };
    });
  }
}

/** The pages of a fresh app on this Latchkey, in one browser. */
export async function openPagesDriver(latchkey: TestLatchkey): Promise<OpenedDriver> {
  const browser = await PageClient.create(latchkey);
  return { driver: new PagesDriver(browser, latchkey), close: () => browser.close() };
}
