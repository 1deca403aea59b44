import { afterEach, describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import type { User } from '../model.js';
import { createUser, setUserPassword } from '../users.js';
import { makePasswordResetKey, requestPasswordReset, resetKeyAccount, resetPasswordWithKey, userForResetKey } from './password-reset.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('password reset flow on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...settings });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  const resetKeyFromMail = (index = -1): string => {
    const mail = latchkey.mailer.outbox.at(index)!;
    return /\/accounts\/password\/reset\/key\/([^/\s]+)\//.exec(mail.text)![1]!;
  };

  it('makes keys of the form <id base36>-<time base36>-<hmac> that name their account', async () => {
    await setUp();
    const key = makePasswordResetKey(latchkey.deps, ada);
    expect(key).toMatch(/^[0-9a-z]+-[0-9a-z]+-[A-Za-z0-9_-]{43}$/);
    expect(resetKeyAccount(key)).toBe(ada.id.toString(36));
    expect((await userForResetKey(latchkey.deps, key))?.id).toBe(ada.id);
  });

  it('refuses forged, altered, foreign-account and non-string keys', async () => {
    await setUp();
    const other = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const key = makePasswordResetKey(latchkey.deps, ada);
    const [, time, hmac] = /^[0-9a-z]+-([0-9a-z]+)-(.+)$/.exec(key)!;
    const flipped = hmac!.startsWith('A') ? `B${hmac!.slice(1)}` : `A${hmac!.slice(1)}`;
    for (const bad of [`${ada.id.toString(36)}-${time}-${flipped}`, `${other.id.toString(36)}-${time}-${hmac}`, `${key}x`, '', null, ['x'], 42, undefined]) {
      expect(await userForResetKey(latchkey.deps, bad)).toBeUndefined();
    }
  });

  it('a key is valid at ACCOUNT_PASSWORD_RESET_TIMEOUT and refused one second later', async () => {
    await setUp({ settings: { ACCOUNT_PASSWORD_RESET_TIMEOUT: 3600 } });
    const key = makePasswordResetKey(latchkey.deps, ada);
    latchkey.clock.advance(3600 * 1000);
    expect(await userForResetKey(latchkey.deps, key)).toBeDefined();
    latchkey.clock.advance(1000);
    expect(await userForResetKey(latchkey.deps, key)).toBeUndefined();
  });

  it('a key dies when the password, the primary email or the last login changes', async () => {
    await setUp();
    const afterPassword = makePasswordResetKey(latchkey.deps, ada);
    await setUserPassword(latchkey.deps, ada, NEW_PASSWORD);
    expect(await userForResetKey(latchkey.deps, afterPassword)).toBeUndefined();

    const beforeEmail = makePasswordResetKey(latchkey.deps, (await latchkey.deps.store.users.findById(ada.id))!);
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'ada@new.example', verified: true, primary: true });
    expect(await userForResetKey(latchkey.deps, beforeEmail)).toBeUndefined();

    const beforeLogin = makePasswordResetKey(latchkey.deps, (await latchkey.deps.store.users.findById(ada.id))!);
    expect(await userForResetKey(latchkey.deps, beforeLogin)).toBeDefined();
    latchkey.clock.advance(1000);
    await latchkey.deps.store.users.update(ada.id, { lastLogin: latchkey.clock.now() });
    expect(await userForResetKey(latchkey.deps, beforeLogin)).toBeUndefined();
  });

  it('refuses the key of a deactivated account', async () => {
    await setUp();
    const key = makePasswordResetKey(latchkey.deps, ada);
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    expect(await userForResetKey(latchkey.deps, key)).toBeUndefined();
  });

  it('mails a link built from SITE_URL to the stored address only, and nothing for an unknown one', async () => {
    await setUp();
    const known = await requestPasswordReset(latchkey.deps, { email: ' ADA@Example.COM ', client });
    expect(await known.delivery).toEqual([{ status: 'sent' }]);
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(latchkey.mailer.outbox[0]!.subject).toBe('[Test Site] Password reset');
    expect(latchkey.mailer.outbox[0]!.text).toContain(`http://testserver/accounts/password/reset/key/${resetKeyFromMail()}/`);
    expect(latchkey.mailer.outbox[0]!.html).toContain('/accounts/password/reset/key/');
    const unknown = await requestPasswordReset(latchkey.deps, { email: 'nobody@example.com', client });
    expect(await unknown.delivery).toEqual([]);
    expect(latchkey.mailer.outbox).toHaveLength(1);
  });

  it('reaches the verified holder of an address, never an account that only added it unverified', async () => {
    await setUp();
    const claimant = await createUser(latchkey.deps, { username: 'claimant', email: 'claimant@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.deps.store.emailAddresses.add({ userId: claimant.id, email: 'shared@example.com', verified: false, primary: false });
    await (await requestPasswordReset(latchkey.deps, { email: 'shared@example.com', client })).delivery;
    expect(latchkey.mailer.outbox).toEqual([]);
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'shared@example.com', verified: true, primary: false });
    await (await requestPasswordReset(latchkey.deps, { email: 'shared@example.com', client })).delivery;
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['shared@example.com']]);
    expect(await userForResetKey(latchkey.deps, resetKeyFromMail())).toMatchObject({ id: ada.id });
  });

  it('refuses an empty or malformed address, and counts requests per address before looking anything up', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { reset_password: '2/m/key' } } });
    await expect(requestPasswordReset(latchkey.deps, { email: '  ', client })).rejects.toMatchObject({ code: 'invalid_input', param: 'email' });
    await expect(requestPasswordReset(latchkey.deps, { email: 'a@b.com,c@d.com', client })).rejects.toMatchObject({ code: 'invalid_email' });
    for (const email of ['ada@example.com', 'ADA@example.com']) await requestPasswordReset(latchkey.deps, { email, client });
    await expect(requestPasswordReset(latchkey.deps, { email: 'ａｄａ@example.com', client })).rejects.toMatchObject({ code: 'rate_limited' });
    await latchkey.deps.background.idle();
    expect(latchkey.mailer.outbox).toHaveLength(2);
  });

  it('sets the new password, ends every session, notifies the owner and emits password_reset', async () => {
    await setUp();
    await latchkey.deps.sessions.create({ userId: ada.id });
    const key = makePasswordResetKey(latchkey.deps, ada);
    const result = await resetPasswordWithKey(latchkey.deps, { key, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client });
    expect(result.notification).toEqual({ status: 'sent' });
    const stored = (await latchkey.deps.store.users.findById(ada.id))!;
    expect((await latchkey.deps.passwords.verify(NEW_PASSWORD, stored.password)).valid).toBe(true);
    expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toEqual(['[Test Site] Your password has been reset']);
    expect(latchkey.mailer.outbox[0]!.text).toContain('203.0.113.7');
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).map((record) => record.event)).toContain('password_reset');
    await expect(resetPasswordWithKey(latchkey.deps, { key, password1: 'yet another passphrase', password2: 'yet another passphrase', client })).rejects.toMatchObject({
      code: 'invalid_key',
    });
  });

  it('refuses a mismatched or weak password with the field named, changing nothing', async () => {
    await setUp();
    const key = makePasswordResetKey(latchkey.deps, ada);
    await expect(resetPasswordWithKey(latchkey.deps, { key, password1: NEW_PASSWORD, password2: 'different', client })).rejects.toMatchObject({ param: 'password2' });
    await expect(resetPasswordWithKey(latchkey.deps, { key, password1: 'password', password2: 'password', client })).rejects.toMatchObject({ param: 'password1' });
    expect((await latchkey.deps.store.users.findById(ada.id))!.password).toBe(ada.password);
    expect(await userForResetKey(latchkey.deps, key)).toBeDefined();
  });

  it('of two parallel uses of one key exactly one succeeds', async () => {
    await setUp();
    const key = makePasswordResetKey(latchkey.deps, ada);
    const attempts = await Promise.allSettled(
      ['first parallel passphrase', 'second parallel passphrase'].map((password) => resetPasswordWithKey(latchkey.deps, { key, password1: password, password2: password, client })),
    );
    expect(attempts.filter((attempt) => attempt.status === 'fulfilled')).toHaveLength(1);
    const refused = attempts.find((attempt) => attempt.status === 'rejected');
    expect(isLatchkeyError(refused?.reason, 'invalid_key')).toBe(true);
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).filter((record) => record.event === 'password_reset')).toHaveLength(1);
  });

  it('limits uses of keys per IP', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { reset_password_from_key: '1/m/ip' } } });
    await resetPasswordWithKey(latchkey.deps, { key: 'bad', password1: NEW_PASSWORD, password2: NEW_PASSWORD, client }).catch(() => undefined);
    const key = makePasswordResetKey(latchkey.deps, ada);
    await expect(resetPasswordWithKey(latchkey.deps, { key, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client })).rejects.toMatchObject({ code: 'rate_limited' });
  });
});
