/**
 * Login by a mailed code, the flow both doors call: the code's shape, its single use, its
 * attempt limit, its expiry, unknown addresses, the address it verifies, and MFA after it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/load.js';
import type { User } from '../../account/model.js';
import type { SettingValues } from '../../config/settings.js';
import { createUser } from '../../account/users.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { confirmLoginCode, requestLoginCode, type LoginCodeState } from './login-by-code.js';
import { continueLogin } from '../pipeline.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe('login by code settings', () => {
  const load = (env: Record<string, string>) =>
    loadSettings({ USERNAME_TYPE: 'email', SITE_NAME: 'Acme', DOMAIN_NAME: 'acme.example' }, { env, cwd: mkdtempSync(join(tmpdir(), 'lk-code-')) });

  it("has allauth's defaults and reads the environment", () => {
    expect(load({})).toMatchObject({
      ACCOUNT_LOGIN_BY_CODE_ENABLED: false,
      ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 3,
      ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180,
      ACCOUNT_LOGIN_BY_CODE_REQUIRED: false,
      ACCOUNT_RATE_LIMITS: { request_login_code: '20/m/ip,3/m/key' },
    });
    const env = { LATCHKEY_ACCOUNT_LOGIN_BY_CODE_ENABLED: 'true', LATCHKEY_ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: '5', LATCHKEY_ACCOUNT_LOGIN_BY_CODE_TIMEOUT: '600' };
    expect(load(env)).toMatchObject({ ACCOUNT_LOGIN_BY_CODE_ENABLED: true, ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 5, ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 600 });
  });

  it('takes ACCOUNT_LOGIN_BY_CODE_REQUIRED as true, false or a list of allauth\'s methods, and refuses anything else', () => {
    expect(load({ LATCHKEY_ACCOUNT_LOGIN_BY_CODE_REQUIRED: 'true' }).ACCOUNT_LOGIN_BY_CODE_REQUIRED).toBe(true);
    expect(load({ LATCHKEY_ACCOUNT_LOGIN_BY_CODE_REQUIRED: 'false' }).ACCOUNT_LOGIN_BY_CODE_REQUIRED).toBe(false);
    expect(load({ LATCHKEY_ACCOUNT_LOGIN_BY_CODE_REQUIRED: '["password","socialaccount"]' }).ACCOUNT_LOGIN_BY_CODE_REQUIRED).toEqual(['password', 'socialaccount']);
    expect(() => load({ LATCHKEY_ACCOUNT_LOGIN_BY_CODE_REQUIRED: '["passkey"]' })).toThrow(/ACCOUNT_LOGIN_BY_CODE_REQUIRED/);
    expect(() => load({ LATCHKEY_ACCOUNT_LOGIN_BY_CODE_REQUIRED: 'always' })).toThrow(/ACCOUNT_LOGIN_BY_CODE_REQUIRED/);
  });
});

describe.each(testDatabaseKinds())('login by code on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Partial<SettingValues> = {}, verified = true): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true, ...settings } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }

  /** Asks for a code for `email` and returns the state and the mailed code (undefined when nothing was mailed). */
  async function ask(email: string): Promise<{ state: LoginCodeState; code: string | undefined }> {
    const before = latchkey.mailer.outbox.length;
    const { state, delivery } = await requestLoginCode(latchkey.deps, { email, client });
    await delivery;
    const mail = latchkey.mailer.outbox.slice(before)[0];
    const code = mail && /\n([A-Z0-9]{6})\n/.exec(mail.text)?.[1];
    return { state, code };
  }

  const confirm = (state: LoginCodeState, code: string) => confirmLoginCode(latchkey.deps, state, { code, client });

  it('mails a six-character code without look-alike characters, keeps only its hash, and signs in with it', async () => {
    await setUp();
    const { state, code } = await ask('ADA@example.com');
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{6}$/);
    expect(latchkey.mailer.outbox[0]!.to).toEqual(['ada@example.com']);
    expect(latchkey.mailer.outbox[0]!.subject).toContain('Your sign-in code');
    expect(JSON.stringify(state)).not.toContain(code);
    // Typed in lower case with a space, as people do.
    const confirmation = await confirm(state, ` ${code!.slice(0, 3).toLowerCase()} ${code!.slice(3)}`);
    expect(confirmation).toMatchObject({ status: 'login', result: { status: 'authenticated', user: { id: ada.id }, proofs: [{ kind: 'email_code', email: 'ada@example.com' }] } });
  });

  it('answers an unknown address like a known one and mails nothing', async () => {
    await setUp();
    const unknown = await ask('nobody@example.com');
    expect(unknown.code).toBeUndefined();
    expect(latchkey.mailer.outbox).toEqual([]);
    expect(Object.keys(unknown.state).sort()).toEqual(['attempts', 'codeHash', 'email', 'expiresAt', 'id']);
    expect(await confirm(unknown.state, 'ABCDEF')).toEqual({ status: 'incorrect', state: { ...unknown.state, attempts: 1 } });
  });

  it('refuses what is not an address, and limits requests per address', async () => {
    await setUp({ ACCOUNT_RATE_LIMITS: { request_login_code: '20/m/ip,1/m/key' } });
    await expect(requestLoginCode(latchkey.deps, { email: 'not an address', client })).rejects.toMatchObject({ code: 'invalid_email', param: 'email' });
    await expect(requestLoginCode(latchkey.deps, { email: ' ', client })).rejects.toMatchObject({ reason: 'required', param: 'email' });
    await ask('ada@example.com');
    await expect(requestLoginCode(latchkey.deps, { email: 'Ada@Example.com', client })).rejects.toBeInstanceOf(RateLimitedError);
  });

  it('uses a code once', async () => {
    await setUp();
    const { state, code } = await ask('ada@example.com');
    expect((await confirm(state, code!)).status).toBe('login');
    // The same state and code again (a replayed session, a double submit): refused.
    expect(await confirm(state, code!)).toEqual({ status: 'expired' });
  });

  it('drops the login after MAX_ATTEMPTS wrong codes, even before the right one', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 3 });
    const { state, code } = await ask('ada@example.com');
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    const first = await confirm(state, wrong);
    expect(first).toEqual({ status: 'incorrect', state: { ...state, attempts: 1 } });
    const second = await confirm(state, wrong);
    expect(second).toMatchObject({ status: 'incorrect', state: { attempts: 2 } });
    expect(await confirm(state, wrong)).toEqual({ status: 'incorrect', state: undefined });
    // Every slot is used, whatever the client claims in its state.
    expect(await confirm(state, code!)).toEqual({ status: 'expired' });
  });

  it('counts parallel wrong guesses against one limit', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 2 });
    const { state, code } = await ask('ada@example.com');
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => confirm(state, wrong)));
    expect(outcomes.filter((outcome) => outcome.status === 'incorrect')).toHaveLength(2);
    expect(outcomes.filter((outcome) => outcome.status === 'expired')).toHaveLength(2);
  });

  it('refuses a code after ACCOUNT_LOGIN_BY_CODE_TIMEOUT', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180 });
    const { state, code } = await ask('ada@example.com');
    latchkey.clock.advance(180_000);
    expect(await confirm(state, code!)).toEqual({ status: 'expired' });
  });

  it('verifies the address it was mailed to, so mandatory verification does not stop the login', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' }, false);
    const { state, code } = await ask('ada@example.com');
    expect(await confirm(state, code!)).toMatchObject({ status: 'login', result: { status: 'authenticated' } });
    expect((await latchkey.deps.store.emailAddresses.listForUser(ada.id)).map((address) => address.verified)).toEqual([true]);
  });

  it('mails nothing to an inactive account', async () => {
    await setUp();
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    expect((await ask('ada@example.com')).code).toBeUndefined();
    expect(latchkey.mailer.outbox).toEqual([]);
  });

  it('still asks for the second factor after the code', async () => {
    await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const { state, code } = await ask('ada@example.com');
    const confirmation = await confirm(state, code!);
    if (confirmation.status !== 'login' || confirmation.result.status !== 'stopped') throw new Error(`expected a stopped login, got ${JSON.stringify(confirmation)}`);
    expect(confirmation.result.stage).toBe('mfa_authenticate');
    const done = await continueLogin(latchkey.deps, confirmation.result.pending, { code: totp.code() }, { client });
    expect(done).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'email_code' }, { kind: 'totp' }] });
  });
});
