import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../../testing/mfa.js';
import { useCode } from '../authenticators.js';
import { NEEDS_AUTHENTICATOR, NO_RECOVERY_CODES, regenerateRecoveryCodes, viewRecoveryCodes } from './recovery-codes.js';
import { activateTotp, totpSetup } from './totp.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('recovery code flows on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  async function setUp(options: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...options });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    if (latchkey.settings.MFA_SUPPORTED_TYPES.includes('recovery_codes')) {
      totp = await activateTotpFor(latchkey, ada);
    } else {
      // activateTotpFor reads the recovery codes back, and such a project makes none.
      const setup = await totpSetup(latchkey.deps, ada);
      await activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: now(), pending: setup.pending, code: totpCodeAt(latchkey.deps, setup.secret, now()) });
    }
    latchkey.mailer.outbox.length = 0;
  }

  const now = () => latchkey.clock.now();
  const secondsAgo = (seconds: number) => new Date(now().getTime() - seconds * 1000);
  const regenerate = (options: { lastAuthenticatedAt?: Date | undefined; user?: User } = {}) =>
    regenerateRecoveryCodes(latchkey.deps, { user: options.user ?? ada, client, lastAuthenticatedAt: 'lastAuthenticatedAt' in options ? options.lastAuthenticatedAt : now() });
  const events = async (name: string) => (await latchkey.deps.store.auditLog.listForUser(ada.id, 1000)).filter((record) => record.event === name);

  describe('viewing', () => {
    it('needs a login or reauthentication within the last 300 seconds', async () => {
      await setUp();
      for (const lastAuthenticatedAt of [undefined, secondsAgo(301)]) {
        await expect(viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt })).rejects.toMatchObject({ code: 'reauthentication_required' });
      }
      expect((await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: secondsAgo(300) })).unused).toEqual(totp.recoveryCodes);
    });

    it('shows only the unused codes once one has been used', async () => {
      await setUp();
      const [first, second, third] = totp.recoveryCodes as [string, string, string];
      expect(await useCode(latchkey.deps, ada, second)).toBe('recovery_codes');
      const view = await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: now() });
      expect(view.total).toBe(10);
      expect(view.unused).toHaveLength(9);
      expect(view.unused).not.toContain(second);
      expect(view.unused.slice(0, 2)).toEqual([first, third]);
      expect(view.unused).toEqual(totp.recoveryCodes.filter((code) => code !== second));
    });

    it('shows none once every code has been used', async () => {
      await setUp({ settings: { MFA_RECOVERY_CODE_COUNT: 2 } });
      for (const code of totp.recoveryCodes) expect(await useCode(latchkey.deps, ada, code)).toBe('recovery_codes');
      expect(await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: now() })).toEqual({ unused: [], total: 2 });
    });

    it('answers not_found to a user without recovery codes', async () => {
      await setUp();
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      await expect(viewRecoveryCodes(latchkey.deps, { user: bob, lastAuthenticatedAt: now() })).rejects.toMatchObject({ code: 'not_found', message: NO_RECOVERY_CODES.id });
    });
  });

  describe('regenerating', () => {
    it('needs a login or reauthentication within the last 300 seconds', async () => {
      await setUp();
      for (const lastAuthenticatedAt of [undefined, secondsAgo(301)]) {
        await expect(regenerate({ lastAuthenticatedAt })).rejects.toMatchObject({ code: 'reauthentication_required' });
      }
      // Nothing changed: the old codes still work, and nobody was told anything.
      expect(await useCode(latchkey.deps, ada, totp.recoveryCodes[0]!)).toBe('recovery_codes');
      expect(latchkey.mailer.outbox).toEqual([]);
      expect(await events('authenticator_reset')).toEqual([]);
      expect((await regenerate({ lastAuthenticatedAt: secondsAgo(300) })).codes).toHaveLength(10);
    });

    it('needs an active authenticator app', async () => {
      await setUp();
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      await expect(regenerate({ user: bob })).rejects.toMatchObject({ code: 'invalid_input', message: NEEDS_AUTHENTICATOR.id });
      expect(await latchkey.deps.store.authenticators.listForUser(bob.id)).toEqual([]);
      expect(latchkey.mailer.outbox).toEqual([]);
    });

    it('gives MFA_RECOVERY_CODE_COUNT new codes; the old set stops working and the new one works', async () => {
      await setUp();
      const before = await latchkey.deps.store.authenticators.findForUser(ada.id, 'recovery_codes');
      const { codes, notification } = await regenerate();
      expect(notification).toEqual({ status: 'sent' });
      expect(codes).toHaveLength(latchkey.settings.MFA_RECOVERY_CODE_COUNT);
      for (const code of codes) expect(code).toMatch(/^\d{8}$/);
      expect(codes).not.toEqual(totp.recoveryCodes);
      const after = await latchkey.deps.store.authenticators.findForUser(ada.id, 'recovery_codes');
      expect(after!.id).not.toBe(before!.id);
      for (const code of totp.recoveryCodes.filter((old) => !codes.includes(old))) expect(await useCode(latchkey.deps, ada, code)).toBeUndefined();
      expect(await useCode(latchkey.deps, ada, codes[0]!)).toBe('recovery_codes');
      expect(await useCode(latchkey.deps, ada, codes[9]!)).toBe('recovery_codes');
      expect((await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: now() })).unused).toEqual(codes.slice(1, 9));
      // The app itself is untouched.
      expect(await useCode(latchkey.deps, ada, totp.code())).toBe('totp');
    });

    it('starts the new set with none used', async () => {
      await setUp();
      expect(await useCode(latchkey.deps, ada, totp.recoveryCodes[0]!)).toBe('recovery_codes');
      const { codes } = await regenerate();
      expect((await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: now() })).unused).toEqual(codes);
    });

    it('sends the notification and emits authenticator_reset', async () => {
      await setUp();
      await regenerate();
      expect(latchkey.mailer.outbox.map((mail) => [mail.to, mail.subject])).toEqual([[['ada@example.com'], '[Test Site] New recovery codes were generated for your account']]);
      expect(latchkey.mailer.outbox[0]!.text).not.toContain(totp.recoveryCodes[0]!);
      const reset = await events('authenticator_reset');
      expect(reset.map((record) => record.data)).toEqual([{ type: 'recovery_codes' }]);
      expect(reset[0]!.ipAddress).toBe(client.ip);
    });

    it('follows MFA_RECOVERY_CODE_COUNT 3 and MFA_RECOVERY_CODE_DIGITS 10', async () => {
      await setUp({ settings: { MFA_RECOVERY_CODE_COUNT: 3, MFA_RECOVERY_CODE_DIGITS: 10 } });
      expect(totp.recoveryCodes).toHaveLength(3);
      for (const code of totp.recoveryCodes) expect(code).toMatch(/^\d{10}$/);
      const { codes } = await regenerate();
      expect(codes).toHaveLength(3);
      for (const code of codes) expect(code).toMatch(/^\d{10}$/);
      expect(await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: now() })).toEqual({ unused: codes, total: 3 });
      expect(await useCode(latchkey.deps, ada, `${codes[2]!.slice(0, 5)}-${codes[2]!.slice(5)}`)).toBe('recovery_codes');
      // An 8-digit prefix of a 10-digit code is no code.
      expect(await useCode(latchkey.deps, ada, codes[0]!.slice(0, 8))).toBeUndefined();
    });

    it('answers not_found when the project does not offer recovery codes, and has none to show', async () => {
      await setUp({ settings: { MFA_SUPPORTED_TYPES: ['totp'] } });
      expect((await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type)).toEqual(['totp']);
      await expect(regenerate()).rejects.toMatchObject({ code: 'not_found' });
      await expect(viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: now() })).rejects.toMatchObject({ code: 'not_found', message: NO_RECOVERY_CODES.id });
    });

    it('still shows the codes a user has after the project stops offering them, but makes no new ones', async () => {
      await setUp();
      const deps = { ...latchkey.deps, settings: { ...latchkey.settings, MFA_SUPPORTED_TYPES: ['totp' as const] } };
      expect((await viewRecoveryCodes(deps, { user: ada, lastAuthenticatedAt: now() })).unused).toEqual(totp.recoveryCodes);
      await expect(regenerateRecoveryCodes(deps, { user: ada, client, lastAuthenticatedAt: now() })).rejects.toMatchObject({ code: 'not_found' });
      expect(await useCode(deps, ada, totp.recoveryCodes[0]!)).toBe('recovery_codes');
    });
  });
});
