/**
 * POST and DELETE /api/auth-token/ (DRF's ObtainAuthToken, with a second factor): the contract's
 * shapes, the login stages (inactive, unverified, MFA), the login rate limit, revocation, and two
 * ways to get a token without the credentials' full proof: from a browser stopped at the MFA step,
 * and by a foreign user id in the body.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser, deactivateUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import type { User } from '../../account/model.js';
import type { UsernameType } from '../../config/settings.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews, type ApiRequestOptions } from '../../testing/api.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { TOKEN_LOGIN_CODE_REQUIRED } from '../../tokens/flows/obtain-token.js';

const PASSWORD = 'a long enough passphrase';
const KEY_FORMAT = /^[0-9a-f]{40}$/;
const UNABLE = { non_field_errors: ['Unable to log in with provided credentials.'] };

describe.each(testDatabaseKinds())('/api/auth-token/ on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let client: ApiTestClient;
  let ada: User;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(options: { usernameType?: UsernameType; settings?: Partial<SettingValues> } = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, ...options });
    app = await createApiTestApp(latchkey, { routes: registerTestApiViews });
    client = new ApiTestClient(app, latchkey);
    ada = await createUser(latchkey.deps, { ...(options.usernameType === 'email' ? {} : { username: 'ada' }), email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  async function obtain(body: ApiRequestOptions, from: ApiTestClient = client): Promise<LightMyRequestResponse> {
    const response = await from.request('POST', '/api/auth-token/', body);
    expect(response.headers['cache-control']).toBe('no-store');
    return response;
  }

  async function whoami(key: string): Promise<LightMyRequestResponse> {
    return client.request('GET', '/api/whoami/', { token: key });
  }

  it('answers {"token": <key>} to form-encoded and JSON credentials: the same key every time', async () => {
    await setUp();
    const form = await obtain({ form: { username: 'ada', password: PASSWORD } });
    expect(form.statusCode).toBe(200);
    expect(form.headers['content-type']).toMatch(/^application\/json/);
    const { token } = form.json<{ token: string }>();
    expect(token).toMatch(KEY_FORMAT);
    const json = await obtain({ json: { username: 'ada', password: PASSWORD } });
    expect(json.json()).toEqual({ token });
    expect((await whoami(token)).json()).toMatchObject({ username: 'ada' });
  });

  it('takes the email in `username` when users log in by email', async () => {
    await setUp({ usernameType: 'email' });
    const response = await obtain({ json: { username: 'ada@example.com', password: PASSWORD } });
    expect(response.statusCode).toBe(200);
    expect((await whoami(response.json<{ token: string }>().token)).json()).toMatchObject({ email: 'ada@example.com' });
  });

  it('names each missing or blank field, with DRF\'s messages', async () => {
    await setUp();
    const missing = await obtain({ json: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ username: ['This field is required.'], password: ['This field is required.'] });
    expect((await obtain({ form: { username: 'ada' } })).json()).toEqual({ password: ['This field is required.'] });
    expect((await obtain({ form: { username: '  ', password: '' } })).json()).toEqual({ username: ['This field may not be blank.'], password: ['This field may not be blank.'] });
    expect((await obtain({})).json()).toEqual({ username: ['This field is required.'], password: ['This field is required.'] });
  });

  it('refuses values that are not text, and JSON that is not an object, before any login', async () => {
    await setUp();
    const injection = await obtain({ json: { username: 'ada', password: { $ne: '' } } });
    expect(injection.statusCode).toBe(400);
    expect(injection.json()).toEqual({ password: ['Not a valid string.'] });
    expect((await obtain({ json: { username: ['ada'], password: null } })).json()).toEqual({ username: ['Not a valid string.'], password: ['This field may not be null.'] });
    expect((await obtain({ json: [{ username: 'ada', password: PASSWORD }] })).json()).toEqual({ non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] });
    expect((await obtain({ json: { username: 'ada\u0000', password: PASSWORD } })).json()).toEqual({ username: ['Null characters are not allowed.'] });
    const malformed = await obtain({ body: '{"username": "ada", ', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json<{ detail: string }>().detail).toMatch(/^JSON parse error - /);
    const text = await obtain({ body: `username=ada&password=${PASSWORD}`, headers: { 'content-type': 'text/plain' } });
    expect(text.statusCode).toBe(415);
  });

  it('refuses a wrong password, an unknown user and an inactive account alike', async () => {
    await setUp();
    const wrong = await obtain({ form: { username: 'ada', password: 'not the password' } });
    const unknown = await obtain({ form: { username: 'nobody', password: PASSWORD } });
    await createUser(latchkey.deps, { username: 'inactive', email: 'inactive@example.com', password: PASSWORD, emailVerified: true });
    const inactiveUser = await latchkey.deps.store.users.findByUsername('inactive');
    if (!inactiveUser) throw new Error('no user');
    await deactivateUser(latchkey.deps, inactiveUser);
    const inactive = await obtain({ form: { username: 'inactive', password: PASSWORD } });
    for (const response of [wrong, unknown, inactive]) {
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual(UNABLE);
    }
  });

  it('answers SQL injection payloads as any other wrong credentials', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: false } });
    const payloads = ["ada' --", "' OR '1'='1", "ada'; DROP TABLE latchkey_users; --", "' OR pg_sleep(2) IS NULL --", "ada\" OR \"\"=\"", "'||(SELECT sqlite_version())||'"];
    for (const payload of payloads) {
      expect((await obtain({ json: { username: payload, password: PASSWORD } })).json(), payload).toEqual(UNABLE);
      expect((await obtain({ form: { username: 'ada', password: payload } })).json(), payload).toEqual(UNABLE);
    }
    expect((await obtain({ json: { username: 'ada', password: PASSWORD } })).statusCode).toBe(200);
  });

  it('refuses an unverified account under mandatory verification, saying why', async () => {
    await setUp({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    await createUser(latchkey.deps, { username: 'newcomer', email: 'newcomer@example.com', password: PASSWORD, emailVerified: false });
    const response = await obtain({ json: { username: 'newcomer', password: PASSWORD } });
    expect(response.statusCode).toBe(400);
    const body = response.json<{ non_field_errors: string[] }>();
    expect(Object.keys(body)).toEqual(['non_field_errors']);
    expect(body.non_field_errors[0]).toMatch(/not verified/);
    // A wrong password still gets the generic refusal: only the right one learns of the address.
    expect((await obtain({ json: { username: 'newcomer', password: 'wrong password here' } })).json()).toEqual(UNABLE);
  });

  it('refuses a token where every login needs a mailed code, which a token client cannot bring back, and mails nothing', async () => {
    await setUp({ settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: true } });
    const refused = await obtain({ json: { username: 'ada', password: PASSWORD } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ non_field_errors: [TOKEN_LOGIN_CODE_REQUIRED] });
    expect(latchkey.mailer.outbox).toEqual([]);
    // A wrong password still gets the generic refusal: only the right one learns of the requirement.
    expect((await obtain({ json: { username: 'ada', password: 'wrong password here' } })).json()).toEqual(UNABLE);
  });

  it("still gives a token for a password where only provider sign-ins need a mailed code (['socialaccount'])", async () => {
    await setUp({ settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: ['socialaccount'] } });
    expect((await obtain({ json: { username: 'ada', password: PASSWORD } })).json()).toEqual({ token: expect.stringMatching(KEY_FORMAT) });
  });

  it('asks a user with MFA for the code, refuses a wrong one, and accepts a TOTP or recovery code', async () => {
    await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const withoutCode = await obtain({ json: { username: 'ada', password: PASSWORD } });
    expect(withoutCode.statusCode).toBe(400);
    expect(Object.keys(withoutCode.json())).toEqual(['code']);
    const wrongCode = await obtain({ json: { username: 'ada', password: PASSWORD, code: '000000' === totp.code() ? '111111' : '000000' } });
    expect(wrongCode.statusCode).toBe(400);
    expect(Object.keys(wrongCode.json())).toEqual(['code']);
    // The right code with a wrong password is no better than the wrong password alone.
    expect((await obtain({ json: { username: 'ada', password: 'not the password', code: totp.code() } })).json()).toEqual(UNABLE);
    const withCode = await obtain({ form: { username: 'ada', password: PASSWORD, code: totp.code() } });
    expect(withCode.statusCode).toBe(200);
    const withRecoveryCode = await obtain({ json: { username: 'ada', password: PASSWORD, code: totp.recoveryCodes[0] } });
    expect(withRecoveryCode.json()).toEqual(withCode.json());
  });

  it('does not let a browser stopped at the MFA step get a token without the code', async () => {
    await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const browser = client.another();
    const login = await browser.logIn('ada', PASSWORD);
    expect(login.headers.location).toContain('/accounts/2fa/authenticate/');
    // The session holds the password step; the endpoint reads no cookie, so it still needs the code.
    const refused = await obtain({ form: { username: 'ada', password: PASSWORD } }, browser);
    expect(refused.statusCode).toBe(400);
    expect(Object.keys(refused.json())).toEqual(['code']);
    expect((await obtain({ form: { username: 'ada', password: PASSWORD, code: totp.code() } }, browser)).statusCode).toBe(200);
  });

  it('needs no CSRF token from a logged-in browser: its cookie plays no part', async () => {
    await setUp();
    const browser = client.another();
    expect((await browser.logIn('ada', PASSWORD)).statusCode).toBe(302);
    const response = await obtain({ json: { username: 'ada', password: PASSWORD } }, browser);
    expect(response.statusCode).toBe(200);
  });

  it('ignores a user id in the body: the token is always the credentials\' user\'s', async () => {
    await setUp();
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
    const response = await obtain({ json: { username: 'ada', password: PASSWORD, user: grace.id, userId: grace.id, user_id: grace.id, is_staff: true } });
    expect(response.statusCode).toBe(200);
    const key = response.json<{ token: string }>().token;
    expect((await whoami(key)).json()).toMatchObject({ username: 'ada' });
    expect((await client.request('GET', '/api/staff-only/', { token: key })).statusCode).toBe(403);
    expect(await latchkey.deps.store.apiTokens.findForUser(grace.id)).toBeUndefined();
  });

  it('throttles repeated failures with DRF\'s 429, even for the right password afterwards', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { login_failed: '3/m/key' } } });
    for (let attempt = 0; attempt < 3; attempt += 1) expect((await obtain({ form: { username: 'ada', password: `wrong ${attempt} password` } })).statusCode).toBe(400);
    const throttled = await obtain({ form: { username: 'ada', password: PASSWORD } });
    expect(throttled.statusCode).toBe(429);
    const retryAfter = Number(throttled.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(throttled.json()).toEqual({ detail: `Request was throttled. Expected available in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.` });
    latchkey.clock.advance(61_000);
    expect((await obtain({ form: { username: 'ada', password: PASSWORD } })).statusCode).toBe(200);
  });

  it('DELETE revokes the token that authenticates it: 204, then the key is refused and a new one issued', async () => {
    await setUp();
    const key = (await obtain({ json: { username: 'ada', password: PASSWORD } })).json<{ token: string }>().token;
    const deleted = await client.request('DELETE', '/api/auth-token/', { token: key });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    const refused = await whoami(key);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ detail: 'Invalid token.' });
    expect((await client.request('DELETE', '/api/auth-token/', { token: key })).statusCode).toBe(401);
    const renewed = (await obtain({ json: { username: 'ada', password: PASSWORD } })).json<{ token: string }>().token;
    expect(renewed).toMatch(KEY_FORMAT);
    expect(renewed).not.toBe(key);
  });

  it('DELETE without a token is 401, also from a logged-in browser: only the token itself revokes it', async () => {
    await setUp();
    const key = (await obtain({ json: { username: 'ada', password: PASSWORD } })).json<{ token: string }>().token;
    const anonymous = await client.request('DELETE', '/api/auth-token/');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Token');
    expect(anonymous.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
    const browser = client.another();
    await browser.logIn('ada', PASSWORD);
    expect((await browser.request('DELETE', '/api/auth-token/', { csrf: true })).statusCode).toBe(401);
    expect((await whoami(key)).statusCode).toBe(200);
  });

  it('answers other methods with 405 and the Allow header', async () => {
    await setUp();
    for (const method of ['GET', 'PUT', 'PATCH'] as const) {
      const response = await client.request(method, '/api/auth-token/');
      expect(response.statusCode, method).toBe(405);
      expect(response.json()).toEqual({ detail: `Method "${method}" not allowed.` });
      expect(response.headers.allow).toBe('POST, DELETE, OPTIONS');
    }
  });
});
