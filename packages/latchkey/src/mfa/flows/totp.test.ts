import { afterEach, describe, expect, it } from 'vitest';
import { loginWithPassword } from '../../login/password.js';
import { continueLogin, pendingLoginState } from '../../login/pipeline.js';
import { PASSWORD as PASSWORD_FACTOR } from '../../login/proofs.js';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor, totpCodeAt } from '../../testing/mfa.js';
import { INCORRECT_CODE } from './authenticate.js';
import { viewRecoveryCodes } from './recovery-codes.js';
import { activateTotp, deactivateTotp, EMAIL_UNVERIFIED, TOTP_ALREADY_ACTIVE, TOTP_NOT_ACTIVE, totpSetup } from './totp.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('authenticator app (TOTP) flows on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp(options: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...options });
    const byEmail = (options.usernameType ?? 'username') === 'email';
    ada = await createUser(latchkey.deps, { ...(byEmail ? {} : { username: 'ada' }), email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  /** Activates with the code the app shows now, as the person would right after scanning. */
  async function activate(user: User, fields: Partial<Parameters<typeof activateTotp>[1]> = {}) {
    const setup = await totpSetup(latchkey.deps, user);
    const now = latchkey.clock.now();
    return activateTotp(latchkey.deps, { user, client, lastAuthenticatedAt: now, pending: setup.pending, code: totpCodeAt(latchkey.deps, setup.secret, now), ...fields });
  }

  const events = async (user: User) => (await latchkey.deps.store.auditLog.listForUser(user.id)).map((record) => ({ event: record.event, data: record.data }));

  describe('setup', () => {
    it('refuses a user without a verified email address, and says why', async () => {
      await setUp();
      const unverified = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: false });
      await expect(totpSetup(latchkey.deps, unverified)).rejects.toMatchObject({ code: 'email_unverified', message: EMAIL_UNVERIFIED.id });
      expect(EMAIL_UNVERIFIED.id).toMatch(/verif(y|ied) your email address/);
      const noEmail = await createUser(latchkey.deps, { username: 'carol', password: PASSWORD, emailVerified: false });
      await expect(totpSetup(latchkey.deps, noEmail)).rejects.toMatchObject({ code: 'email_unverified' });
    });

    it('refuses when an authenticator app is already active', async () => {
      await setUp();
      await activateTotpFor(latchkey, ada);
      await expect(totpSetup(latchkey.deps, ada)).rejects.toMatchObject({ code: 'authenticator_exists', message: TOTP_ALREADY_ACTIVE.id });
    });

    it('keeps the same secret when given its own pending value back, and only then', async () => {
      await setUp();
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      const first = await totpSetup(latchkey.deps, ada);
      const again = await totpSetup(latchkey.deps, ada, first.pending);
      expect(again.secret).toBe(first.secret);
      expect(again.totpUrl).toBe(first.totpUrl);
      expect((await totpSetup(latchkey.deps, ada)).secret).not.toBe(first.secret);
      expect((await totpSetup(latchkey.deps, ada, 'v1.garbage')).secret).not.toBe(first.secret);
      // Another account's pending secret is not taken over.
      expect((await totpSetup(latchkey.deps, bob, first.pending)).secret).not.toBe(first.secret);
    });

    it('gives an otpauth URI with the site as issuer and the username as label, and a base32 secret', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      expect(setup.secret).toMatch(/^[A-Z2-7]{32}$/);
      const uri = new URL(setup.totpUrl);
      expect(uri.protocol).toBe('otpauth:');
      expect(uri.host).toBe('totp');
      expect(decodeURIComponent(uri.pathname)).toBe('/Test Site:ada');
      expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: 'Test Site', secret: setup.secret, algorithm: 'SHA1', digits: '6', period: '30' });
    });

    it('labels the URI with the email address in a project that logs in by email', async () => {
      await setUp({ usernameType: 'email' });
      const setup = await totpSetup(latchkey.deps, ada);
      const uri = new URL(setup.totpUrl);
      expect(decodeURIComponent(uri.pathname)).toBe('/Test Site:ada@example.com');
      expect(uri.searchParams.get('issuer')).toBe('Test Site');
    });

    it('draws the QR code as an SVG without style attributes', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      expect(setup.qrSvg.startsWith('<svg')).toBe(true);
      expect(setup.qrSvg.trimEnd().endsWith('</svg>')).toBe(true);
      expect(setup.qrSvg).not.toContain('style=');
      expect(setup.qrSvg).not.toContain('<script');
    });

    it('follows MFA_TOTP_DIGITS and MFA_TOTP_PERIOD in the URI', async () => {
      await setUp({ settings: { MFA_TOTP_DIGITS: 8, MFA_TOTP_PERIOD: 60 } });
      const uri = new URL((await totpSetup(latchkey.deps, ada)).totpUrl);
      expect(uri.searchParams.get('digits')).toBe('8');
      expect(uri.searchParams.get('period')).toBe('60');
    });
  });

  describe('activation', () => {
    it('needs a login or reauthentication within the last 300 seconds', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      const now = latchkey.clock.now();
      const code = totpCodeAt(latchkey.deps, setup.secret, now);
      const input = { user: ada, client, pending: setup.pending, code };
      for (const lastAuthenticatedAt of [undefined, new Date(now.getTime() - 301_000), new Date(now.getTime() + 1_000)]) {
        await expect(activateTotp(latchkey.deps, { ...input, lastAuthenticatedAt })).rejects.toMatchObject({ code: 'reauthentication_required' });
      }
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
      await activateTotp(latchkey.deps, { ...input, lastAuthenticatedAt: new Date(now.getTime() - 300_000) });
      expect(await latchkey.deps.store.authenticators.findForUser(ada.id, 'totp')).toBeDefined();
    });

    it('refuses a wrong code', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      const now = latchkey.clock.now();
      const right = totpCodeAt(latchkey.deps, setup.secret, now);
      const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
      for (const code of [wrong, '', 'abcdef', totpCodeAt(latchkey.deps, setup.secret, new Date(now.getTime() - 30_000))]) {
        await expect(activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: now, pending: setup.pending, code })).rejects.toMatchObject({
          code: 'incorrect_code',
          message: INCORRECT_CODE.id,
          param: 'code',
        });
      }
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
      expect(latchkey.mailer.outbox).toEqual([]);
    });

    it('refuses a pending secret sealed for another user, or none', async () => {
      await setUp();
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
      const bobs = await totpSetup(latchkey.deps, bob);
      const now = latchkey.clock.now();
      const code = totpCodeAt(latchkey.deps, bobs.secret, now);
      await expect(activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: now, pending: bobs.pending, code })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: now, pending: undefined, code })).rejects.toMatchObject({ code: 'invalid_input' });
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
      // Bob's own setup is untouched by the attempt.
      await activateTotp(latchkey.deps, { user: bob, client, lastAuthenticatedAt: now, pending: bobs.pending, code });
      expect(await latchkey.deps.store.authenticators.findForUser(bob.id, 'totp')).toBeDefined();
    });

    it('refuses a user whose address is no longer verified', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      await latchkey.database.kysely.updateTable('latchkey_email_addresses').set({ verified: 0 }).where('user_id', '=', ada.id).execute();
      const now = latchkey.clock.now();
      await expect(
        activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: now, pending: setup.pending, code: totpCodeAt(latchkey.deps, setup.secret, now) }),
      ).rejects.toMatchObject({ code: 'email_unverified' });
    });

    it('creates the app and recovery codes, sends the notice and emits authenticator_added', async () => {
      await setUp();
      const result = await activate(ada);
      expect(result.recoveryCodesGenerated).toBe(true);
      expect(result.notification).toEqual({ status: 'sent' });
      const authenticators = await latchkey.deps.store.authenticators.listForUser(ada.id);
      expect(authenticators.map((authenticator) => authenticator.type).sort()).toEqual(['recovery_codes', 'totp']);
      const { unused, total } = await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now() });
      expect(total).toBe(latchkey.settings.MFA_RECOVERY_CODE_COUNT);
      expect(unused).toHaveLength(10);
      for (const code of unused) expect(code).toMatch(/^\d{8}$/);
      expect(latchkey.mailer.outbox.map((mail) => [mail.to, mail.subject])).toEqual([[['ada@example.com'], '[Test Site] Two-factor authentication was turned on for your account']]);
      const added = (await events(ada)).filter((record) => record.event === 'authenticator_added');
      expect(added.map((record) => record.data.type).sort()).toEqual(['recovery_codes', 'totp']);
    });

    it('follows MFA_RECOVERY_CODE_COUNT and MFA_RECOVERY_CODE_DIGITS', async () => {
      await setUp({ settings: { MFA_RECOVERY_CODE_COUNT: 3, MFA_RECOVERY_CODE_DIGITS: 10 } });
      await activate(ada);
      const { unused, total } = await viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now() });
      expect(total).toBe(3);
      expect(unused).toHaveLength(3);
      for (const code of unused) expect(code).toMatch(/^\d{10}$/);
    });

    it('creates no recovery codes when the project does not offer them', async () => {
      await setUp({ settings: { MFA_SUPPORTED_TYPES: ['totp'] } });
      const result = await activate(ada);
      expect(result.recoveryCodesGenerated).toBe(false);
      expect((await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type)).toEqual(['totp']);
      expect((await events(ada)).filter((record) => record.event === 'authenticator_added').map((record) => record.data.type)).toEqual(['totp']);
    });

    it('uses up the code that activated the app: it cannot then log in', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      const now = latchkey.clock.now();
      const code = totpCodeAt(latchkey.deps, setup.secret, now);
      await activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: now, pending: setup.pending, code });
      const login = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client });
      expect(login).toMatchObject({ status: 'stopped', stage: 'mfa_authenticate' });
      await expect(continueLogin(latchkey.deps, pendingLoginState(latchkey.deps, ada, [PASSWORD_FACTOR]), { code }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
      // The next code of the app does.
      latchkey.clock.advance(30_000);
      const next = totpCodeAt(latchkey.deps, setup.secret, latchkey.clock.now());
      expect(await continueLogin(latchkey.deps, pendingLoginState(latchkey.deps, ada, [PASSWORD_FACTOR]), { code: next }, { client })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }] });
    });

    it('lets exactly one of two parallel activations win; the other is told the app exists', async () => {
      await setUp();
      const setup = await totpSetup(latchkey.deps, ada);
      const now = latchkey.clock.now();
      const input = { user: ada, client, lastAuthenticatedAt: now, pending: setup.pending, code: totpCodeAt(latchkey.deps, setup.secret, now) };
      const outcomes = await Promise.allSettled([activateTotp(latchkey.deps, input), activateTotp(latchkey.deps, input)]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(refused).toHaveLength(1);
      expect(refused[0]!.reason).toMatchObject({ code: 'authenticator_exists' });
      expect((await latchkey.deps.store.authenticators.listForUser(ada.id)).map((authenticator) => authenticator.type).sort()).toEqual(['recovery_codes', 'totp']);
      expect(latchkey.mailer.outbox).toHaveLength(1);
      expect((await events(ada)).filter((record) => record.event === 'authenticator_added')).toHaveLength(2);
    });

    it('lets exactly one of two parallel activations with different secrets win', async () => {
      await setUp();
      const now = latchkey.clock.now();
      const inputs = await Promise.all(
        [0, 1].map(async () => {
          const setup = await totpSetup(latchkey.deps, ada);
          return { user: ada, client, lastAuthenticatedAt: now, pending: setup.pending, code: totpCodeAt(latchkey.deps, setup.secret, now), secret: setup.secret };
        }),
      );
      const outcomes = await Promise.allSettled(inputs.map((input) => activateTotp(latchkey.deps, input)));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((outcome) => outcome.status === 'rejected')).toMatchObject({ reason: { code: 'authenticator_exists' } });
      // The winner's app is the one that logs in.
      const winner = inputs[outcomes.findIndex((outcome) => outcome.status === 'fulfilled')]!;
      latchkey.clock.advance(30_000);
      await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client });
      const code = totpCodeAt(latchkey.deps, winner.secret, latchkey.clock.now());
      expect(await continueLogin(latchkey.deps, pendingLoginState(latchkey.deps, ada, [PASSWORD_FACTOR]), { code }, { client })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }] });
    });
  });

  describe('deactivation', () => {
    it('needs a recent login or reauthentication', async () => {
      await setUp();
      await activateTotpFor(latchkey, ada);
      const now = latchkey.clock.now();
      for (const lastAuthenticatedAt of [undefined, new Date(now.getTime() - 301_000)]) {
        await expect(deactivateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt })).rejects.toMatchObject({ code: 'reauthentication_required' });
      }
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toHaveLength(2);
    });

    it('removes the app and the recovery codes, sends the notice and emits authenticator_removed', async () => {
      await setUp();
      const totp = await activateTotpFor(latchkey, ada);
      latchkey.mailer.outbox.length = 0;
      const result = await deactivateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
      expect(result.notification).toEqual({ status: 'sent' });
      expect(await latchkey.deps.store.authenticators.listForUser(ada.id)).toEqual([]);
      expect(latchkey.mailer.outbox.map((mail) => [mail.to, mail.subject])).toEqual([[['ada@example.com'], '[Test Site] Two-factor authentication was turned off for your account']]);
      const removed = (await events(ada)).filter((record) => record.event === 'authenticator_removed');
      expect(removed.map((record) => record.data.type).sort()).toEqual(['recovery_codes', 'totp']);
      // The login no longer asks for a code, and the old codes count for nothing.
      expect(await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }] });
      await expect(viewRecoveryCodes(latchkey.deps, { user: ada, lastAuthenticatedAt: latchkey.clock.now() })).rejects.toMatchObject({ code: 'not_found' });
      expect(totp.recoveryCodes).toHaveLength(10);
    });

    it('answers not_found when there is no app, and sends nothing', async () => {
      await setUp();
      await expect(deactivateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() })).rejects.toMatchObject({
        code: 'not_found',
        message: TOTP_NOT_ACTIVE.id,
      });
      expect(latchkey.mailer.outbox).toEqual([]);
      expect((await events(ada)).filter((record) => record.event === 'authenticator_removed')).toEqual([]);
    });

    it('lets a second activation follow, with a new secret', async () => {
      await setUp();
      const first = await activateTotpFor(latchkey, ada);
      await deactivateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
      const second = await activateTotpFor(latchkey, ada);
      expect(second.secret).not.toBe(first.secret);
      await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, client });
      await expect(continueLogin(latchkey.deps, pendingLoginState(latchkey.deps, ada, [PASSWORD_FACTOR]), { code: first.recoveryCodes[0]! }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
      expect(await continueLogin(latchkey.deps, pendingLoginState(latchkey.deps, ada, [PASSWORD_FACTOR]), { code: second.code() }, { client })).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'totp' }] });
    });
  });

  it('answers not_found for setup and activation when the project offers only recovery codes', async () => {
    await setUp({ settings: { MFA_SUPPORTED_TYPES: ['recovery_codes'] } });
    await expect(totpSetup(latchkey.deps, ada)).rejects.toMatchObject({ code: 'not_found' });
    // Refused before anything else is looked at: no pending secret is even needed to be told so.
    await expect(activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now(), pending: undefined, code: '123456' })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(activateTotp(latchkey.deps, { user: ada, client, lastAuthenticatedAt: undefined, pending: undefined, code: '123456' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
