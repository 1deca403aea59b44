/**
 * Email verification by code, the flows every door calls: the code a confirmation mail carries,
 * the verify_email stage that holds it in the stopped login, the code of an added address, and the
 * code no mail carries that a signup with a taken address gets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../model.js';
import { createUser } from '../users.js';
import type { SettingValues } from '../../config/settings.js';
import { beginLogin, type LoginResult, type PendingLoginState } from '../../login/pipeline.js';
import { PASSWORD as PASSWORD_FACTOR } from '../../login/proofs.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { confirmEmailByCode, sendEmailConfirmation } from '../email-confirmation.js';
import { addEmailAddress } from './manage-email.js';
import { signup } from './signup.js';
import { resendVerificationCode, verifyEmailWithCode, type HeldVerificationCode } from './verify-email.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('email verification by code on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Partial<SettingValues> = {}, verified = false): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true, ...settings } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }

  function mailedCode(address = 'ada@example.com'): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    if (code === undefined) throw new Error(`no code was mailed to ${address}`);
    return code;
  }

  function stoppedAtVerifyEmail(result: LoginResult): PendingLoginState {
    if (result.status !== 'stopped' || result.stage !== 'verify_email') throw new Error(`expected a login stopped at verify_email, got ${JSON.stringify(result)}`);
    return result.pending;
  }

  const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');
  const verify = (code: string, input: { waitingLogin?: PendingLoginState; held?: HeldVerificationCode; signedInUserId?: number } = {}) =>
    verifyEmailWithCode(latchkey.deps, { code, waitingLogin: input.waitingLogin, held: input.held, signedInUserId: input.signedInUserId, context: { client } });

  it('mails a code instead of a link and hands its state (its hash only) to the caller', async () => {
    await setUp();
    const address = (await latchkey.deps.store.emailAddresses.listForUser(ada.id))[0]!;
    const mail = await sendEmailConfirmation(latchkey.deps, address, client);
    if (!mail.sent || mail.code === undefined) throw new Error('no code state');
    const code = mailedCode();
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{6}$/);
    expect(latchkey.mailer.outbox[0]!.text).not.toContain('/accounts/confirm-email/');
    expect(latchkey.mailer.outbox[0]!.html).toContain(code);
    expect(JSON.stringify(mail.code)).not.toContain(code);
    expect(mail.code).toMatchObject({ email: 'ada@example.com', attempts: 0 });
  });

  it('stops a login at verify_email holding the code it mailed; the right code verifies and carries the login on', async () => {
    await setUp();
    const pending = stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    expect(pending.code).toMatchObject({ stage: 'verify_email', email: 'ada@example.com' });
    expect(await verify(wrongFor(mailedCode()), { waitingLogin: pending })).toEqual({ status: 'incorrect' });
    const done = await verify(mailedCode(), { waitingLogin: pending });
    expect(done).toMatchObject({ status: 'login', result: { status: 'authenticated', user: { id: ada.id } } });
    const [address] = await latchkey.deps.store.emailAddresses.listForUser(ada.id);
    expect(address).toMatchObject({ verified: true, primary: true });
  });

  it('ends the waiting login once the code is used up or expired', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 2, ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: 300 });
    const pending = stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    const code = mailedCode();
    for (let attempt = 0; attempt < 2; attempt += 1) expect(await verify(wrongFor(code), { waitingLogin: pending })).toEqual({ status: 'incorrect' });
    expect(await verify(code, { waitingLogin: pending })).toEqual({ status: 'login', result: { status: 'ended' } });

    latchkey.clock.advance(181_000);
    const later = stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    latchkey.clock.advance(300_000);
    expect(await verify(mailedCode(), { waitingLogin: later })).toEqual({ status: 'login', result: { status: 'ended' } });
  });

  it('takes only the code its own login holds: another login\'s code is wrong', async () => {
    await setUp({ ACCOUNT_RATE_LIMITS: { confirm_email: '10/m/key' } });
    const first = stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    const firstCode = mailedCode();
    const second = stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    if (mailedCode() !== firstCode) expect(await verify(firstCode, { waitingLogin: second })).toEqual({ status: 'incorrect' });
    expect(await verify(firstCode, { waitingLogin: first })).toMatchObject({ status: 'login', result: { status: 'authenticated' } });
  });

  it('waits without a code when the confirm_email limit held the mail back; a resend later gives it one', async () => {
    await setUp();
    stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    const held = stoppedAtVerifyEmail(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client }));
    expect(held.code).toBeUndefined();
    expect(await verify(mailedCode(), { waitingLogin: held })).toEqual({ status: 'none' });
    await expect(resendVerificationCode(latchkey.deps, { waitingLogin: held, held: undefined, signedInUserId: undefined, client })).rejects.toMatchObject({ code: 'rate_limited' });
    latchkey.clock.advance(181_000);
    const resent = await resendVerificationCode(latchkey.deps, { waitingLogin: held, held: undefined, signedInUserId: undefined, client });
    if (!('waitingLogin' in resent)) throw new Error('expected the login with a new code');
    expect(await verify(mailedCode(), { waitingLogin: resent.waitingLogin })).toMatchObject({ status: 'login', result: { status: 'authenticated' } });
  });

  it("verifies a signed-in user's added address by its code, for that user only", async () => {
    await setUp({}, true);
    const added = await addEmailAddress(latchkey.deps, { user: ada, email: 'second@example.com', client, lastAuthenticatedAt: latchkey.clock.now() });
    if (added.code === undefined) throw new Error('no code state');
    const held: HeldVerificationCode = { userId: ada.id, state: added.code };
    const code = mailedCode('second@example.com');
    expect(await verify(code, { held, signedInUserId: ada.id + 1 })).toEqual({ status: 'none' });
    expect(await verify(code, { held })).toEqual({ status: 'none' });
    expect(await verify(code, { held, signedInUserId: ada.id })).toMatchObject({ status: 'confirmed', address: { email: 'second@example.com', verified: true, primary: false } });
    // Used: the same state and code again are refused.
    expect(await confirmEmailByCode(latchkey.deps, { userId: ada.id, state: added.code, code, client })).toEqual({ status: 'expired' });
  });

  it('gives a signup with a taken address a code no mail carries, which only runs out', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 2 });
    const result = await signup(latchkey.deps, { username: 'imposter', email: 'ada@example.com', password1: PASSWORD, password2: PASSWORD, client });
    if (result.status !== 'verification_sent' || result.code === undefined) throw new Error(`expected a code state, got ${JSON.stringify(result)}`);
    expect(result.login).toBeUndefined();
    // The owner got a notice, not a code.
    expect(latchkey.mailer.lastTo('ada@example.com')!.text).not.toMatch(/\n[A-Z0-9]{6}\n/);
    const held: HeldVerificationCode = { userId: null, state: result.code };
    expect(await verify('AAAAAA', { held })).toEqual({ status: 'incorrect' });
    expect(await verify('BBBBBB', { held })).toEqual({ status: 'incorrect' });
    expect(await verify('CCCCCC', { held })).toEqual({ status: 'expired' });
  });

  it("a new account's signup hands its login the code the signup mailed, so it is not mailed twice", async () => {
    await setUp();
    const result = await signup(latchkey.deps, { username: 'grace', email: 'grace@example.com', password1: PASSWORD, password2: PASSWORD, client });
    if (result.status !== 'verification_sent' || result.login?.status !== 'stopped') throw new Error(`expected a stopped login, got ${JSON.stringify(result)}`);
    expect(latchkey.mailer.outbox.filter((mail) => mail.to.includes('grace@example.com'))).toHaveLength(1);
    expect(await verify(mailedCode('grace@example.com'), { waitingLogin: result.login.pending })).toMatchObject({ status: 'login', result: { status: 'authenticated' } });
  });

  it('mails a token client no code it could not bring back', async () => {
    await setUp();
    expect(await beginLogin(latchkey.deps, ada, PASSWORD_FACTOR, { client, takesMailedCodes: false })).toMatchObject({ status: 'stopped', stage: 'verify_email' });
    expect(latchkey.mailer.outbox).toEqual([]);
  });
});
