/**
 * The journeys of a single-page app written for allauth's headless API, against the example site
 * configured as allauth's own example backend (its examples/react-spa settings): login by email,
 * mandatory verification by a mailed code, login by code, an authenticator app, recovery codes,
 * passkeys, passkey login and passkey signup. The site runs as a real process on SQLite and on
 * PostgreSQL, mails go through a real SMTP server, and the app's passkeys come from a software
 * authenticator that lays out its bytes as the WebAuthn specification does. Every answer is
 * checked against allauth's published contract. The same app in Chromium, with the browser's
 * own virtual authenticator, is in the other headless-spa journeys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SoftwareAuthenticator } from '../packages/latchkey/src/testing/webauthn-authenticator.js';

type CreationOptions = Parameters<SoftwareAuthenticator['create']>[0];
type RequestOptions = Parameters<SoftwareAuthenticator['get']>[0];
import { appCode, PERIOD_MS } from './authenticator-app.js';
import { siteDatabases, startSite, type RunningSite } from './harness.js';
import { HeadlessBrowserClient, isAuthenticated, pendingFlow, type HttpAnswer } from './harness/headless-http.js';
import { FAST_HASHING_ENV, JOURNEY_TIMEOUT_MS, PASSWORD, SETUP_TIMEOUT_MS, uniqueName } from './journey.js';

/** allauth's example backend, in Latchkey's settings. */
const ALLAUTH_EXAMPLE_BACKEND: Record<string, string> = {
  ...FAST_HASHING_ENV,
  LATCHKEY_ACCOUNT_LOGIN_METHODS: 'email',
  LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  LATCHKEY_ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: 'true',
  LATCHKEY_ACCOUNT_LOGIN_BY_CODE_ENABLED: 'true',
  LATCHKEY_MFA_SUPPORTED_TYPES: 'totp,recovery_codes,webauthn',
  LATCHKEY_MFA_PASSKEY_LOGIN_ENABLED: 'true',
  LATCHKEY_MFA_PASSKEY_SIGNUP_ENABLED: 'true',
  // One step either side, so that a login right after the activation need not wait for a new step.
  LATCHKEY_MFA_TOTP_TOLERANCE: '1',
  LATCHKEY_HEADLESS_FRONTEND_URLS: JSON.stringify({
    account_confirm_email: '{SITE_URL}/spa/#/verify/{key}',
    account_reset_password_from_key: '{SITE_URL}/spa/#/password/reset/{key}',
  }),
};

describe.each(siteDatabases())('an app written for allauth, against the example site configured as allauth\'s example backend, on %s', (database) => {
  let site: RunningSite;
  beforeAll(async () => {
    site = await startSite({ usernameType: 'email', database, env: ALLAUTH_EXAMPLE_BACKEND });
  }, SETUP_TIMEOUT_MS);
  afterAll(() => site?.stop());

  const mailsTo = (email: string) => site.smtp.messages.filter((message) => message.envelope.to.includes(email));

  /**
   * What `pattern` finds in a mail to `email` that arrives after the first `seen` of them (by
   * default, after the action that the caller has just taken and counted before).
   */
  async function fromNewestMail(email: string, pattern: RegExp, seen = 0): Promise<string> {
    for (let waited = 0; waited < 5_000; waited += 50) {
      const found = mailsTo(email)
        .slice(seen)
        .map((message) => pattern.exec(message.text ?? '')?.[1])
        .findLast((match) => match !== undefined);
      if (found !== undefined) return found;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`No mail to ${email} matching ${String(pattern)}.`);
  }

  /** The code in the newest mail to `email` after the first `seen`: a line of its own. */
  const mailedCode = (email: string, seen = 0) => fromNewestMail(email, /^\s*([A-Z0-9]{6})\s*$/m, seen);

  function expectSignedIn(answer: HttpAnswer, email: string): void {
    expect(isAuthenticated(answer), JSON.stringify(answer.body)).toBe(true);
    expect(answer.body.data.user.email).toBe(email);
  }

  /** Signs up with a password and confirms the address by the mailed code: a signed-in client. */
  async function signedUp(prefix: string): Promise<{ app: HeadlessBrowserClient; email: string }> {
    const app = new HeadlessBrowserClient(site.url);
    const email = `${uniqueName(prefix)}@example.com`;
    const signup = await app.post('/auth/signup', { email, password: PASSWORD });
    expect(signup.status).toBe(401);
    expect(pendingFlow(signup)).toBe('verify_email');
    expectSignedIn(await app.post('/auth/email/verify', { key: await mailedCode(email) }), email);
    return { app, email };
  }

  it('reads the configuration an allauth app expects', async () => {
    const config = await new HeadlessBrowserClient(site.url).get('/config');
    expect(config.body.data.account).toMatchObject({ login_methods: ['email'], login_by_code_enabled: true, email_verification_by_code_enabled: true });
    expect(config.body.data.mfa).toMatchObject({ supported_types: expect.arrayContaining(['totp', 'recovery_codes', 'webauthn']), passkey_login_enabled: true });
  });

  it('signs up with an email and a password, is asked for the mailed code, a wrong code is refused, the right one signs in', async () => {
    const app = new HeadlessBrowserClient(site.url);
    const email = `${uniqueName('signup')}@example.com`;
    const signup = await app.post('/auth/signup', { email, password: PASSWORD });
    expect(pendingFlow(signup)).toBe('verify_email');
    // The session stays unauthenticated while the code is awaited.
    expect((await app.get('/auth/session')).status).toBe(401);
    const code = await mailedCode(email);
    const wrong = await app.post('/auth/email/verify', { key: code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA' });
    expect(wrong.status).toBe(400);
    expectSignedIn(await app.post('/auth/email/verify', { key: code }), email);
  }, JOURNEY_TIMEOUT_MS);

  it('logs out and logs in again with the password', async () => {
    const { app, email } = await signedUp('password');
    expect((await app.delete('/auth/session')).status).toBe(401);
    expectSignedIn(await app.post('/auth/login', { email, password: PASSWORD }), email);
  }, JOURNEY_TIMEOUT_MS);

  it('logs in by a mailed code, and an unknown address is answered alike', async () => {
    const { email } = await signedUp('bycode');
    const app = new HeadlessBrowserClient(site.url);
    const seen = mailsTo(email).length;
    const requested = await app.post('/auth/code/request', { email });
    expect(requested.status).toBe(401);
    expect(pendingFlow(requested)).toBe('login_by_code');
    expectSignedIn(await app.post('/auth/code/confirm', { code: await mailedCode(email, seen) }), email);

    const stranger = await new HeadlessBrowserClient(site.url).post('/auth/code/request', { email: `${uniqueName('nobody')}@example.com` });
    expect(stranger.status).toBe(requested.status);
    expect(pendingFlow(stranger)).toBe('login_by_code');
  }, JOURNEY_TIMEOUT_MS);

  it('sets up an authenticator app and recovery codes; a login then asks for a code, and either kind signs in', async () => {
    const { app, email } = await signedUp('totp');
    const setup = await app.get('/account/authenticators/totp');
    expect(setup.status).toBe(404);
    const secret = setup.body.meta.secret as string;
    const activated = await app.post('/account/authenticators/totp', { code: appCode(secret, Date.now()) });
    expect(activated.status).toBe(200);
    const codes = await app.get('/account/authenticators/recovery-codes');
    const recoveryCodes = codes.body.data.unused_codes as string[];
    expect(recoveryCodes).toHaveLength(10);

    await app.delete('/auth/session');
    const stopped = await app.post('/auth/login', { email, password: PASSWORD });
    expect(pendingFlow(stopped)).toBe('mfa_authenticate');
    // The next time step's code: the activation used up this step's.
    expectSignedIn(await app.post('/auth/2fa/authenticate', { code: appCode(secret, Date.now() + PERIOD_MS) }), email);

    await app.delete('/auth/session');
    expect(pendingFlow(await app.post('/auth/login', { email, password: PASSWORD }))).toBe('mfa_authenticate');
    expectSignedIn(await app.post('/auth/2fa/authenticate', { code: recoveryCodes[0] }), email);
  }, JOURNEY_TIMEOUT_MS);

  it('adds a passkey, signs in with it alone, and with it as the second factor after the password', async () => {
    const { app, email } = await signedUp('passkey');
    const authenticator = new SoftwareAuthenticator(site.url);
    const creation = await app.get('/account/authenticators/webauthn?passwordless');
    expect(creation.status).toBe(200);
    const added = await app.post('/account/authenticators/webauthn', { name: 'Laptop', credential: authenticator.create(creation.body.data.creation_options.publicKey as CreationOptions) });
    expect(added.status).toBe(200);
    const listed = await app.get('/account/authenticators');
    expect(listed.body.data).toContainEqual(expect.objectContaining({ type: 'webauthn', name: 'Laptop', is_passwordless: true }));

    await app.delete('/auth/session');
    const options = await app.get('/auth/webauthn/login');
    expectSignedIn(await app.post('/auth/webauthn/login', { credential: authenticator.get(options.body.data.request_options.publicKey as RequestOptions) }), email);

    await app.delete('/auth/session');
    expect(pendingFlow(await app.post('/auth/login', { email, password: PASSWORD }))).toBe('mfa_authenticate');
    const secondFactor = await app.get('/auth/webauthn/authenticate');
    expectSignedIn(await app.post('/auth/webauthn/authenticate', { credential: authenticator.get(secondFactor.body.data.request_options.publicKey as RequestOptions) }), email);
  }, JOURNEY_TIMEOUT_MS);

  it('signs up with a passkey: an email, the mailed code, the passkey; then signs in with it', async () => {
    const app = new HeadlessBrowserClient(site.url);
    const email = `${uniqueName('passkey-signup')}@example.com`;
    const started = await app.post('/auth/webauthn/signup', { email });
    expect(pendingFlow(started)).toBe('verify_email');
    const verified = await app.post('/auth/email/verify', { key: await mailedCode(email) });
    expect(pendingFlow(verified)).toBe('mfa_signup_webauthn');
    const authenticator = new SoftwareAuthenticator(site.url);
    const creation = await app.get('/auth/webauthn/signup');
    expectSignedIn(await app.put('/auth/webauthn/signup', { name: 'Phone', credential: authenticator.create(creation.body.data.creation_options.publicKey as CreationOptions) }), email);

    await app.delete('/auth/session');
    const options = await app.get('/auth/webauthn/login');
    expectSignedIn(await app.post('/auth/webauthn/login', { credential: authenticator.get(options.body.data.request_options.publicKey as RequestOptions) }), email);
  }, JOURNEY_TIMEOUT_MS);

  it('resets a forgotten password from the mailed link, then logs in with the new one', async () => {
    const { email } = await signedUp('reset');
    const app = new HeadlessBrowserClient(site.url);
    expect((await app.post('/auth/password/request', { email })).status).toBe(200);
    const key = await fromNewestMail(email, /\/spa\/#\/password\/reset\/(\S+)/);
    const reset = await app.post('/auth/password/reset', { key, password: 'Amber-Lantern-5531' });
    expect([200, 401]).toContain(reset.status);
    expectSignedIn(await new HeadlessBrowserClient(site.url).post('/auth/login', { email, password: 'Amber-Lantern-5531' }), email);
  }, JOURNEY_TIMEOUT_MS);
});
