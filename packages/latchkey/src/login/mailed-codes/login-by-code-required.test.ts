/**
 * ACCOUNT_LOGIN_BY_CODE_REQUIRED: the login_by_code stage, as the pipeline runs it for every door.
 * Which logins it stops (allauth's methods), the code it mails and holds in the stopped login,
 * its attempts, expiry and single use, MFA after it, and the accounts it cannot serve.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { beginLogin, continueLogin, type LoginResult, type PendingLoginState } from '../pipeline.js';
import type { FirstFactor } from '../proofs.js';
import { loginByCodeRequired } from './stage-codes.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };
const PASSWORD_FACTOR: FirstFactor = { kind: 'password' };
const SOCIAL: FirstFactor = { kind: 'socialaccount', provider: 'openid_connect', uid: 'ada-at-the-idp' };
const SAML: FirstFactor = { kind: 'saml', organization: 'acme', uid: 'ada' };
const PASSKEY: FirstFactor = { kind: 'passkey', authenticatorId: 1 };
const CODE_LOGIN: FirstFactor = { kind: 'email_code', email: 'ada@example.com' };

describe('which logins ACCOUNT_LOGIN_BY_CODE_REQUIRED stops (allauth\'s is_login_by_code_required)', () => {
  const required = (value: SettingValues['ACCOUNT_LOGIN_BY_CODE_REQUIRED'], factor: FirstFactor) => loginByCodeRequired({ ACCOUNT_LOGIN_BY_CODE_REQUIRED: value }, [factor]);

  it('true stops every first factor but a mailed code; false none', () => {
    for (const factor of [PASSWORD_FACTOR, { kind: 'admin_password' } as const, SOCIAL, SAML, PASSKEY]) {
      expect(required(true, factor), factor.kind).toBe(true);
      expect(required(false, factor), factor.kind).toBe(false);
    }
    expect(required(true, CODE_LOGIN)).toBe(false);
  });

  it('a list names the method the login began with: password (the admin form too), socialaccount (providers and SAML), mfa (a passkey)', () => {
    expect(required(['password'], PASSWORD_FACTOR)).toBe(true);
    expect(required(['password'], { kind: 'admin_password' })).toBe(true);
    expect(required(['password'], SOCIAL)).toBe(false);
    expect(required(['socialaccount'], PASSWORD_FACTOR)).toBe(false);
    expect(required(['socialaccount'], SOCIAL)).toBe(true);
    expect(required(['socialaccount'], SAML)).toBe(true);
    expect(required(['mfa'], PASSKEY)).toBe(true);
    expect(required(['mfa'], PASSWORD_FACTOR)).toBe(false);
    expect(required(['password', 'socialaccount', 'mfa'], CODE_LOGIN)).toBe(false);
    expect(required([], PASSWORD_FACTOR)).toBe(false);
  });

  it('never asks again once the login has given a mailed code', () => {
    expect(loginByCodeRequired({ ACCOUNT_LOGIN_BY_CODE_REQUIRED: true }, [PASSWORD_FACTOR, { kind: 'email_code', email: 'ada@example.com' }])).toBe(false);
  });
});

describe.each(testDatabaseKinds())('the login_by_code stage on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Partial<SettingValues> = {}, verified = true): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: true, ...settings } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }

  function stoppedAt(result: LoginResult, stage: string): PendingLoginState {
    if (result.status !== 'stopped' || result.stage !== stage) throw new Error(`expected a login stopped at ${stage}, got ${JSON.stringify(result)}`);
    return result.pending;
  }

  /** The code in the last mail to `address`. */
  function mailedCode(address = 'ada@example.com'): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    if (code === undefined) throw new Error(`no code was mailed to ${address}`);
    return code;
  }

  const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
  const begin = (factor: FirstFactor = PASSWORD_FACTOR) => beginLogin(latchkey.deps, ada, factor, { client });
  const answer = (pending: PendingLoginState, emailCode: string) => continueLogin(latchkey.deps, pending, { emailCode }, { client });

  it('stops a password login right after the password, mails a code to the address, and keeps only its hash in the stopped login', async () => {
    await setUp();
    const pending = stoppedAt(await begin(), 'login_by_code');
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(latchkey.mailer.outbox[0]!.subject).toContain('Your sign-in code');
    const code = mailedCode();
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{6}$/);
    expect(pending.code).toMatchObject({ stage: 'login_by_code', email: 'ada@example.com', attempts: 0 });
    expect(JSON.stringify(pending)).not.toContain(code);
  });

  it('refuses a wrong code, then signs in with the right one, the code recorded as a proof', async () => {
    await setUp();
    const pending = stoppedAt(await begin(), 'login_by_code');
    const code = mailedCode();
    await expect(answer(pending, wrongFor(code))).rejects.toMatchObject({ code: 'incorrect_code', param: 'code', message: 'Incorrect code.' });
    // Typed in lower case with a space, as people do.
    const done = await answer(pending, `${code.slice(0, 3).toLowerCase()} ${code.slice(3)}`);
    expect(done).toMatchObject({ status: 'authenticated', user: { id: ada.id }, proofs: [{ kind: 'password' }, { kind: 'email_code', email: 'ada@example.com' }] });
  });

  it('still asks a TOTP user for the second factor after the code, and does not ask for the code again', async () => {
    await setUp({ MFA_TRUST_ENABLED: true });
    const totp = await activateTotpFor(latchkey, ada);
    const pending = stoppedAt(await begin(), 'login_by_code');
    // The authenticator's code is no answer to this stage: it stays stopped where it was.
    await expect(continueLogin(latchkey.deps, pending, { code: totp.code() }, { client })).resolves.toMatchObject({ status: 'stopped', stage: 'login_by_code' });
    const atMfa = stoppedAt(await answer(pending, mailedCode()), 'mfa_authenticate');
    expect(atMfa.code).toBeUndefined();
    expect(latchkey.mailer.outbox.filter((mail) => mail.subject.includes('Your sign-in code'))).toHaveLength(1);
    const done = await continueLogin(latchkey.deps, atMfa, { code: totp.code() }, { client });
    expect(done).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'email_code' }, { kind: 'totp' }] });
  });

  it('asks a browser that gave the mailed code alone nothing about trusting it', async () => {
    await setUp({ MFA_TRUST_ENABLED: true });
    const pending = stoppedAt(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client, canTrustBrowser: true }), 'login_by_code');
    expect(await continueLogin(latchkey.deps, pending, { emailCode: mailedCode() }, { client, canTrustBrowser: true })).toMatchObject({ status: 'authenticated' });
  });

  it('uses a code once: the same stopped login and code again end the login', async () => {
    await setUp();
    const pending = stoppedAt(await begin(), 'login_by_code');
    const code = mailedCode();
    expect((await answer(pending, code)).status).toBe('authenticated');
    expect(await answer(pending, code)).toEqual({ status: 'ended' });
  });

  it('after MAX_ATTEMPTS wrong codes even the right code ends the login', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 3 });
    const pending = stoppedAt(await begin(), 'login_by_code');
    const code = mailedCode();
    for (let attempt = 0; attempt < 3; attempt += 1) await expect(answer(pending, wrongFor(code))).rejects.toMatchObject({ code: 'incorrect_code' });
    expect(await answer(pending, code)).toEqual({ status: 'ended' });
  });

  it('counts parallel wrong guesses against one limit', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 2 });
    const pending = stoppedAt(await begin(), 'login_by_code');
    const wrong = wrongFor(mailedCode());
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map(() => answer(pending, wrong)));
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(2);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value.status === 'ended')).toHaveLength(2);
  });

  it('ends the login when the code is given after ACCOUNT_LOGIN_BY_CODE_TIMEOUT', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180 });
    const pending = stoppedAt(await begin(), 'login_by_code');
    latchkey.clock.advance(180_000);
    expect(await answer(pending, mailedCode())).toEqual({ status: 'ended' });
  });

  it("takes only its own login's code: another login's code is a wrong code", async () => {
    await setUp();
    const first = stoppedAt(await begin(), 'login_by_code');
    const firstCode = mailedCode();
    const second = stoppedAt(await begin(), 'login_by_code');
    const secondCode = mailedCode();
    expect(secondCode).not.toBe(firstCode);
    await expect(answer(second, firstCode)).rejects.toMatchObject({ code: 'incorrect_code' });
    expect((await answer(first, firstCode)).status).toBe('authenticated');
  });

  it('marks the address verified, so mandatory verification does not stop the login after the code', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' }, false);
    const pending = stoppedAt(await begin(), 'login_by_code');
    expect(await answer(pending, mailedCode())).toMatchObject({ status: 'authenticated' });
    expect((await latchkey.deps.store.emailAddresses.listForUser(ada.id)).map((address) => address.verified)).toEqual([true]);
  });

  it('with a list, stops provider and SAML sign-ins and leaves password logins alone', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_REQUIRED: ['socialaccount'] });
    expect(await begin()).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }] });
    expect(latchkey.mailer.outbox).toEqual([]);
    stoppedAt(await begin(SOCIAL), 'login_by_code');
    stoppedAt(await begin(SAML), 'login_by_code');
  });

  it('never stops a login that began with a mailed code', async () => {
    await setUp();
    expect(await begin(CODE_LOGIN)).toMatchObject({ status: 'authenticated' });
    expect(latchkey.mailer.outbox).toEqual([]);
  });

  it('mails a token client nothing it could not bring back', async () => {
    await setUp();
    expect(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client, takesMailedCodes: false })).toMatchObject({ status: 'stopped', stage: 'login_by_code' });
    expect(latchkey.mailer.outbox).toEqual([]);
  });

  it('refuses the login of an account without any address, as allauth does, instead of letting it through', async () => {
    await setUp();
    const hermit = await createUser(latchkey.deps, { username: 'hermit', password: PASSWORD, emailVerified: false });
    await expect(beginLogin(latchkey.deps, hermit, PASSWORD_FACTOR, { client })).rejects.toMatchObject({ code: 'no_email_address' });
  });

  it('limits the codes mailed to one address (request_login_code)', async () => {
    await setUp({ ACCOUNT_RATE_LIMITS: { request_login_code: '20/m/ip,1/m/key' } });
    stoppedAt(await begin(), 'login_by_code');
    await expect(begin()).rejects.toBeInstanceOf(RateLimitedError);
  });
});
