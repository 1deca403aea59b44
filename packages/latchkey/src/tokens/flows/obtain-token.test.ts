/**
 * Obtaining a token (POST /api/auth-token/'s flow) is a login like any other: the same stages
 * (mandatory verification, MFA), the same rate limits and the same generic refusal, ending in the
 * user's one key instead of a session.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser, deactivateUser } from '../../account/users.js';
import { TOO_MANY_ATTEMPTS } from '../../account/credentials.js';
import { isLatchkeyError, type LatchkeyError } from '../../core/errors.js';
import { INCORRECT_CODE } from '../../mfa/flows/authenticate.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { deleteApiToken, userForApiToken } from '../api-tokens.js';
import { obtainApiToken, TOKEN_CODE_REQUIRED, TOKEN_EMAIL_UNVERIFIED, TOKEN_INVALID_CREDENTIALS, type ObtainTokenInput } from './obtain-token.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

it("refuses credentials in DRF's words (docs/api.md)", () => {
  expect(TOKEN_INVALID_CREDENTIALS).toBe('Unable to log in with provided credentials.');
});

describe.each(testDatabaseKinds())('obtaining an API token on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(options: Parameters<typeof createTestLatchkey>[0] = {}, verified = true): Promise<User> {
    latchkey = await createTestLatchkey({ kind, ...options });
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }

  const obtain = (fields: Partial<ObtainTokenInput> = {}) => obtainApiToken(latchkey.deps, { login: 'ada', password: PASSWORD, code: '', client, ...fields });
  const refusal = (work: Promise<unknown>): Promise<LatchkeyError> =>
    work.then(
      () => {
        throw new Error('expected a refusal');
      },
      (error: unknown) => {
        if (!isLatchkeyError(error)) throw error;
        return error;
      },
    );
  const events = async (user: User, name: string) => (await latchkey.deps.store.auditLog.listForUser(user.id, 1000)).filter((record) => record.event === name);
  const tokenRows = () => latchkey.database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute();

  it('gives the right credentials the same key on every call, and no session', async () => {
    const ada = await setUp();
    const first = await obtain();
    expect(first.user).toMatchObject({ id: ada.id });
    expect(first.key).toMatch(/^[0-9a-f]{40}$/);
    latchkey.clock.advance(60_000);
    expect((await obtain({ login: 'ADA' })).key).toBe(first.key);
    expect(await userForApiToken(latchkey.deps, first.key)).toMatchObject({ id: ada.id });
    expect(await latchkey.deps.store.sessions.listForUser(ada.id)).toEqual([]);
  });

  it('records the token login as api_token_obtained with its method, leaving last_login and user_logged_in alone', async () => {
    const ada = await setUp();
    await obtain();
    await obtain();
    expect((await events(ada, 'api_token_obtained')).map((record) => [record.data, record.ipAddress])).toEqual([
      [{ method: 'password' }, client.ip],
      [{ method: 'password' }, client.ip],
    ]);
    expect(await events(ada, 'api_token_created')).toHaveLength(1);
    expect(await events(ada, 'user_logged_in')).toEqual([]);
    expect((await latchkey.deps.store.users.findById(ada.id))?.lastLogin).toBeNull();
  });

  it('gives a new key after the token is deleted', async () => {
    const ada = await setUp();
    const { key } = await obtain();
    expect(await deleteApiToken(latchkey.deps, ada)).toBe(true);
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    const next = await obtain();
    expect(next.key).not.toBe(key);
    expect((await obtain()).key).toBe(next.key);
  });

  it('takes the email in `login` when the project logs in by email', async () => {
    latchkey = await createTestLatchkey({ kind, usernameType: 'email' });
    const ada = await createUser(latchkey.deps, { email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const { user, key } = await obtain({ login: 'Ada@Example.com' });
    expect(user.id).toBe(ada.id);
    expect(await userForApiToken(latchkey.deps, key)).toMatchObject({ id: ada.id });
  });

  it('refuses a wrong password, an unknown account and empty fields with the one generic message', async () => {
    await setUp();
    for (const fields of [{ password: 'wrong passphrase' }, { login: 'nobody' }, { login: 'nobody@example.com' }, { password: '' }, { login: '' }, { login: '   ' }]) {
      const error = await refusal(obtain(fields));
      expect([error.code, error.message], JSON.stringify(fields)).toEqual(['invalid_credentials', TOKEN_INVALID_CREDENTIALS]);
    }
    expect(await tokenRows()).toEqual([]);
  });

  it('refuses an inactive account exactly as a wrong password, even with the right one', async () => {
    const ada = await setUp();
    await deactivateUser(latchkey.deps, ada);
    const inactive = await refusal(obtain());
    const wrong = await refusal(obtain({ password: 'wrong passphrase' }));
    expect([inactive.code, inactive.message, inactive.param]).toEqual([wrong.code, wrong.message, wrong.param]);
    expect(inactive.message).toBe(TOKEN_INVALID_CREDENTIALS);
    expect(await tokenRows()).toEqual([]);
  });

  it('refuses as a wrong password when the account is deleted between the password check and the token', async () => {
    const ada = await setUp();
    const store = latchkey.deps.store;
    const racing = {
      ...store,
      apiTokens: {
        ...store.apiTokens,
        async findForUser(userId: number) {
          await store.users.delete(userId);
          return store.apiTokens.findForUser(userId);
        },
      },
    };
    const error = await refusal(obtainApiToken({ ...latchkey.deps, store: racing }, { login: 'ada', password: PASSWORD, code: '', client }));
    expect([error.code, error.message]).toEqual(['invalid_credentials', TOKEN_INVALID_CREDENTIALS]);
    expect(await latchkey.deps.store.users.findById(ada.id)).toBeUndefined();
    expect(await tokenRows()).toEqual([]);
  });

  it('refuses an account without a verified address under mandatory verification, and sends the confirmation again', async () => {
    const ada = await setUp({}, false);
    expect(latchkey.settings.ACCOUNT_EMAIL_VERIFICATION).toBe('mandatory');
    const error = await refusal(obtain());
    expect([error.code, error.message]).toEqual(['email_unverified', TOKEN_EMAIL_UNVERIFIED.id]);
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(await tokenRows()).toEqual([]);
    // The wrong password still gets the generic refusal: only the right one learns of the address.
    expect(await refusal(obtain({ password: 'wrong passphrase' }))).toMatchObject({ code: 'invalid_credentials', message: TOKEN_INVALID_CREDENTIALS });
    // Once the address is verified, the token comes.
    const [address] = await latchkey.deps.store.emailAddresses.listForUser(ada.id);
    await latchkey.deps.store.emailAddresses.markVerified(address!.id);
    expect((await obtain()).key).toMatch(/^[0-9a-f]{40}$/);
  });

  it('gives an unverified account its token when verification is optional', async () => {
    await setUp({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional' } }, false);
    expect((await obtain()).key).toMatch(/^[0-9a-f]{40}$/);
  });

  describe('with two-factor authentication on', () => {
    async function setUpWithTotp() {
      const ada = await setUp();
      const totp = await activateTotpFor(latchkey, ada);
      const wrongCode = () => String((Number(totp.code()) + 1) % 1_000_000).padStart(6, '0');
      return { ada, totp, wrongCode };
    }

    it('asks for the code when none is sent, and issues no token', async () => {
      const { ada } = await setUpWithTotp();
      for (const code of ['', '   ']) {
        const error = await refusal(obtain({ code }));
        expect([error.code, error.message, error.param, error.reason]).toEqual(['invalid_input', TOKEN_CODE_REQUIRED.id, 'code', 'mfa_required']);
      }
      expect(await tokenRows()).toEqual([]);
      expect(await events(ada, 'api_token_obtained')).toEqual([]);
    });

    it('refuses a wrong code, records the failure, and issues no token', async () => {
      const { ada, wrongCode } = await setUpWithTotp();
      const error = await refusal(obtain({ code: wrongCode() }));
      expect([error.code, error.message, error.param]).toEqual(['incorrect_code', INCORRECT_CODE.id, 'code']);
      expect(await events(ada, 'authentication_failed')).toHaveLength(1);
      expect(await tokenRows()).toEqual([]);
    });

    it('does not look at the code when the password is wrong', async () => {
      const { ada, totp } = await setUpWithTotp();
      const code = totp.code();
      expect(await refusal(obtain({ password: 'wrong passphrase', code }))).toMatchObject({ code: 'invalid_credentials', message: TOKEN_INVALID_CREDENTIALS });
      // The code was not used up: it still works with the right password.
      expect((await obtain({ code })).user.id).toBe(ada.id);
    });

    it('issues the token for the right TOTP code, and the same key for a later code', async () => {
      const { ada, totp } = await setUpWithTotp();
      const first = await obtain({ code: totp.code() });
      expect(first.user.id).toBe(ada.id);
      expect(await userForApiToken(latchkey.deps, first.key)).toMatchObject({ id: ada.id });
      // The same code is not accepted twice; the next one gives the same key.
      expect(await refusal(obtain({ code: totp.code() }))).toMatchObject({ code: 'incorrect_code' });
      latchkey.clock.advance(latchkey.settings.MFA_TOTP_PERIOD * 1000);
      expect((await obtain({ code: totp.code() })).key).toBe(first.key);
      expect((await events(ada, 'api_token_obtained')).map((record) => record.data)).toEqual([{ method: 'password+totp' }, { method: 'password+totp' }]);
    });

    it('issues the token for a recovery code, which is then used up', async () => {
      const { ada, totp } = await setUpWithTotp();
      const recoveryCode = totp.recoveryCodes[0]!;
      const { key } = await obtain({ code: recoveryCode });
      expect(await userForApiToken(latchkey.deps, key)).toMatchObject({ id: ada.id });
      expect(await refusal(obtain({ code: recoveryCode }))).toMatchObject({ code: 'incorrect_code' });
      expect((await events(ada, 'api_token_obtained')).map((record) => record.data)).toEqual([{ method: 'password+recovery_codes' }]);
    });

    it('counts wrong codes against login_failed: past the limit even the right code is refused', async () => {
      const { totp, wrongCode } = await setUpWithTotp();
      for (let i = 0; i < 5; i++) expect(await refusal(obtain({ code: wrongCode() }))).toMatchObject({ code: 'incorrect_code' });
      expect(await refusal(obtain({ code: totp.code() }))).toMatchObject({ code: 'rate_limited', message: TOO_MANY_ATTEMPTS });
      expect(await tokenRows()).toEqual([]);
      latchkey.clock.advance(5 * 60 * 1000 + 1000);
      expect((await obtain({ code: totp.code() })).key).toMatch(/^[0-9a-f]{40}$/);
    });
  });

  it('counts wrong passwords against login_failed: past the limit even the right one is refused, for known and unknown accounts alike', async () => {
    await setUp();
    // From two addresses, so that each account's own limit from one address (5 in 5 minutes) is
    // what refuses, not the address's limit across accounts.
    const elsewhere = { ...client, ip: '198.51.100.1' };
    for (const [login, from] of [['ada', client], ['nobody', elsewhere]] as const) {
      for (let i = 0; i < 5; i++) {
        expect(await refusal(obtain({ login, password: `wrong ${i}`, client: from }))).toMatchObject({ code: 'invalid_credentials', message: TOKEN_INVALID_CREDENTIALS });
      }
    }
    const known = await refusal(obtain({ client }));
    const unknown = await refusal(obtain({ login: 'nobody', client: elsewhere }));
    expect([known.code, known.message]).toEqual(['rate_limited', TOO_MANY_ATTEMPTS]);
    expect([unknown.code, unknown.message]).toEqual([known.code, known.message]);
    expect(await tokenRows()).toEqual([]);
    latchkey.clock.advance(5 * 60 * 1000 + 1000);
    expect((await obtain()).key).toMatch(/^[0-9a-f]{40}$/);
  });
});
