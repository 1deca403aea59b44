/**
 * The pipeline takes any proven first factor through the same stages: a sign-in through a
 * provider, a passkey or a mailed code stops where a password would, and completes the same way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../account/model.js';
import type { SettingValues } from '../config/settings.js';
import { createUser } from '../account/users.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../testing/mfa.js';
import { completeLogin } from './complete.js';
import { beginLogin, continueLogin } from './pipeline.js';
import { loginMethod, type FirstFactor } from './proofs.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };
const SOCIAL: FirstFactor = { kind: 'socialaccount', provider: 'openid_connect', uid: 'ada-at-the-idp' };

describe.each(testDatabaseKinds())('the login pipeline for every first factor on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Partial<SettingValues> = {}) {
    latchkey = await createTestLatchkey({ kind, settings });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
  }

  it.each<FirstFactor>([SOCIAL, { kind: 'saml', organization: 'acme', uid: 'ada' }, { kind: 'email_code', email: 'ada@example.com' }, { kind: 'admin_password' }])(
    'stops a %o login for the code as a password login stops, and completes with it',
    async (factor) => {
      await setUp();
      const stopped = await beginLogin(latchkey.deps, ada, factor, { client });
      if (stopped.status !== 'stopped') throw new Error(`expected the login to stop, got ${stopped.status}`);
      expect(stopped.stage).toBe('mfa_authenticate');
      const wrong = String((Number(totp.code()) + 1) % 1_000_000).padStart(6, '0');
      await expect(continueLogin(latchkey.deps, stopped.pending, { code: wrong }, { client })).rejects.toMatchObject({ code: 'incorrect_code' });
      const done = await continueLogin(latchkey.deps, stopped.pending, { code: totp.code() }, { client });
      expect(done).toMatchObject({ status: 'authenticated', proofs: [factor, { kind: 'totp' }] });
    },
  );

  it('stops a provider login at verify_email first under mandatory verification, mailing the link', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
    await latchkey.database.kysely.updateTable('latchkey_email_addresses').set({ verified: 0 }).where('user_id', '=', ada.id).execute();
    latchkey.mailer.outbox.length = 0;
    expect(await beginLogin(latchkey.deps, ada, SOCIAL, { client })).toMatchObject({ status: 'stopped', stage: 'verify_email' });
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
  });

  it('refuses an inactive account whatever the first factor', async () => {
    await setUp();
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    const inactive = (await latchkey.deps.store.users.findById(ada.id))!;
    expect(await beginLogin(latchkey.deps, inactive, SOCIAL, { client })).toMatchObject({ status: 'inactive' });
  });

  it('takes a passkey as the second factor it is: no code is asked for', async () => {
    await setUp();
    expect(await beginLogin(latchkey.deps, ada, { kind: 'passkey', authenticatorId: 1 }, { client })).toMatchObject({
      status: 'authenticated',
      proofs: [{ kind: 'passkey', authenticatorId: 1 }],
    });
  });

  it('completes a login with last_login and user_logged_in naming every proof', async () => {
    await setUp();
    latchkey.clock.advance(60_000);
    await completeLogin(latchkey.deps, ada, [SOCIAL, { kind: 'recovery_codes' }], client);
    expect((await latchkey.deps.store.users.findById(ada.id))?.lastLogin).toEqual(latchkey.clock.now());
    const [record] = (await latchkey.deps.store.auditLog.listForUser(ada.id, 10)).filter((entry) => entry.event === 'user_logged_in');
    expect(record?.data).toEqual({ method: 'socialaccount+recovery_codes' });
    expect(loginMethod([{ kind: 'password' }])).toBe('password');
  });
});
