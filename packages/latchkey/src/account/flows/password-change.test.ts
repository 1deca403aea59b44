import { afterEach, describe, expect, it } from 'vitest';
import { refusalsOf, type LatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import type { User } from '../model.js';
import { isUsablePassword } from '../passwords/index.js';
import { createUser } from '../users.js';
import { changePassword, PASSWORD_MISMATCH, setPassword, WRONG_CURRENT_PASSWORD } from './password-change.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('password change and set flows on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...settings });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  const change = (fields: Partial<{ oldPassword: string; password1: string; password2: string }>, user = ada) =>
    changePassword(latchkey.deps, { user, oldPassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client, ...fields });

  it('changes the password, keeps only the current session, notifies and emits password_changed', async () => {
    await setUp();
    const current = await latchkey.deps.sessions.create({ userId: ada.id });
    const other = await latchkey.deps.sessions.create({ userId: ada.id });
    const result = await changePassword(latchkey.deps, { user: ada, oldPassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client, currentSession: current });
    expect(result.notification).toEqual({ status: 'sent' });
    const stored = (await latchkey.deps.store.users.findById(ada.id))!;
    expect((await latchkey.deps.passwords.verify(NEW_PASSWORD, stored.password)).valid).toBe(true);
    expect(await latchkey.deps.sessions.load(current.id)).toBeDefined();
    expect(await latchkey.deps.sessions.load(other.id)).toBeUndefined();
    expect(latchkey.mailer.outbox.map((mail) => [mail.to, mail.subject])).toEqual([[['ada@example.com'], '[Test Site] Your password has been changed']]);
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).map((record) => record.event)).toContain('password_changed');
  });

  it('requires the current password, and refuses a wrong one for one hash and without change', async () => {
    await setUp();
    await expect(change({ oldPassword: '' })).rejects.toMatchObject({ code: 'invalid_input', param: 'oldpassword' });
    const before = latchkey.deps.passwords.stats().completed;
    await expect(change({ oldPassword: 'not my password' })).rejects.toMatchObject({ message: WRONG_CURRENT_PASSWORD.id, param: 'oldpassword' });
    expect(latchkey.deps.passwords.stats().completed - before).toBe(1);
    expect((await latchkey.deps.store.users.findById(ada.id))!.password).toBe(ada.password);
  });

  it('checks the new password before any hashing: validators on password1, the match on password2', async () => {
    await setUp();
    const before = latchkey.deps.passwords.stats().completed;
    await expect(change({ password1: 'password', password2: 'password' })).rejects.toMatchObject({ code: 'password_invalid', param: 'password1' });
    await expect(change({ password2: 'something else' })).rejects.toMatchObject({ message: PASSWORD_MISMATCH.id, param: 'password2' });
    await expect(change({ password1: 'x'.repeat(5000), password2: 'x'.repeat(5000) })).rejects.toMatchObject({ param: 'password1' });
    expect(latchkey.deps.passwords.stats().completed).toBe(before);
  });

  it('refuses every bad field at once: a missing current password, a weak new one and a different confirmation', async () => {
    await setUp();
    const before = latchkey.deps.passwords.stats().completed;
    const refused = await change({ oldPassword: '', password1: 'Zq3!x', password2: 'different' }).catch((error: unknown) => error);
    expect(refusalsOf(refused as LatchkeyError).map((error) => [error.param, error.message])).toEqual([
      ['oldpassword', 'This field is required.'],
      ['password1', 'This password is too short. It must contain at least 8 characters.'],
      ['password2', PASSWORD_MISMATCH.id],
    ]);
    expect(latchkey.deps.passwords.stats().completed).toBe(before);
    // Setting a first password judges its two fields together too.
    const set = await setPassword(latchkey.deps, { user: { ...ada, password: '!unusable' }, password1: '', password2: '', client }).catch((error: unknown) => error);
    expect(refusalsOf(set as LatchkeyError).map((error) => error.param)).toEqual(['password1', 'password2']);
  });

  it('loses a race cleanly: a change based on a stale hash is refused', async () => {
    await setUp();
    await change({});
    await expect(change({ password1: 'a third passphrase', password2: 'a third passphrase' })).rejects.toMatchObject({ code: 'invalid_credentials' });
    const stored = (await latchkey.deps.store.users.findById(ada.id))!;
    expect((await latchkey.deps.passwords.verify(NEW_PASSWORD, stored.password)).valid).toBe(true);
  });

  it('limits changes per user', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { change_password: '2/m/user' } } });
    for (let i = 0; i < 2; i++) await change({ oldPassword: 'wrong' }).catch(() => undefined);
    await expect(change({})).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('sets a first password on an account without one, and refuses set when a password exists', async () => {
    await setUp();
    const social = await createUser(latchkey.deps, { username: 'social', email: 'social@example.com', password: null, emailVerified: true });
    await expect(change({}, social)).rejects.toMatchObject({ code: 'invalid_input' });
    const result = await setPassword(latchkey.deps, { user: social, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client });
    expect(isUsablePassword(result.user.password)).toBe(true);
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toEqual(['[Test Site] A password has been set on your account']);
    expect((await latchkey.deps.store.auditLog.listForUser(social.id)).map((record) => record.event)).toContain('password_set');
    await expect(setPassword(latchkey.deps, { user: ada, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client })).rejects.toMatchObject({ code: 'invalid_input' });
    // A second set from the stale user (a parallel request) loses the compare-and-swap.
    await expect(setPassword(latchkey.deps, { user: social, password1: 'a third passphrase', password2: 'a third passphrase', client })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });

  it('finishes the change even when the notification cannot be sent', async () => {
    await setUp();
    const failure = new Error('SMTP down');
    const send = latchkey.mailer.send.bind(latchkey.mailer);
    latchkey.mailer.send = () => Promise.reject(failure);
    const result = await change({});
    expect(result.notification).toEqual({ status: 'failed', error: failure });
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).map((record) => record.event)).toContain('password_changed');
    // The notice is not lost: the outbox keeps it and sends it once the server is back.
    expect(await latchkey.deps.store.mailOutbox.list()).toEqual([expect.objectContaining({ recipients: ['ada@example.com'], attempts: 1, lastError: 'SMTP down' })]);
    latchkey.mailer.send = send;
    latchkey.clock.advance(60_000);
    expect(await latchkey.deps.mailOutbox.sweep()).toBe(1);
    expect(latchkey.mailer.outbox.map((mail) => mail.subject)).toEqual(['[Test Site] Your password has been changed']);
  });
});
