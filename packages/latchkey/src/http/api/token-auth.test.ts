/**
 * Token authentication of /api/ requests (DRF's TokenAuthentication), and the attacks on it:
 * malformed Authorization headers are 401 and never 500, a key is never taken from the
 * URL, a deleted token or a deactivated user's token is refused at once.
 */
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUser, deactivateUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews } from '../../testing/api.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { deleteApiToken, issueApiToken } from '../../tokens/api-tokens.js';

const PASSWORD = 'a long enough passphrase';
const NOT_PROVIDED = 'Authentication credentials were not provided.';

function expect401(response: LightMyRequestResponse, detail: string): void {
  expect(response.statusCode).toBe(401);
  expect(response.headers['www-authenticate']).toBe('Token');
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.json()).toEqual({ detail });
}

describe.each(testDatabaseKinds())('API token authentication on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let client: ApiTestClient;
  let ada: User;
  let key: string;
  beforeEach(async () => {
    latchkey = await createTestLatchkey({ kind });
    app = await createApiTestApp(latchkey, { routes: registerTestApiViews });
    client = new ApiTestClient(app, latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    key = await issueApiToken(latchkey.deps, ada);
  });
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  const get = (headers: Record<string, string | string[]>, url = '/api/whoami/') => client.request('GET', url, { headers });

  it('authenticates "Authorization: Token <key>", the keyword in any case as DRF compares it', async () => {
    for (const header of [`Token ${key}`, `token ${key}`, `TOKEN ${key}`, `  Token   ${key}  `]) {
      const response = await get({ authorization: header });
      expect(response.statusCode, header).toBe(200);
      expect(response.json()).toMatchObject({ username: 'ada' });
      expect(response.headers['cache-control']).toBe('no-store');
    }
  });

  it('needs no CSRF token for an unsafe request authenticated by token', async () => {
    const response = await client.request('POST', '/api/whoami/', { token: key, json: { a: 1 } });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toEqual({ username: 'ada', received: { a: 1 } });
    const form = await client.request('PATCH', '/api/items/1/', { token: key, form: { name: 'Renamed' } });
    expect(form.json()).toEqual({ id: 1, name: 'Renamed' });
  });

  it('refuses malformed Token headers with DRF\'s messages, never a 500', async () => {
    expect401(await get({ authorization: 'Token' }), 'Invalid token header. No credentials provided.');
    expect401(await get({ authorization: `Token ${key} ${key}` }), 'Invalid token header. Token string should not contain spaces.');
    expect401(await get({ authorization: 'Token cl\u00e9' }), 'Invalid token header. Token string should not contain invalid characters.');
    expect401(await get({ authorization: `Token ${key.toUpperCase()}` }), 'Invalid token.');
    expect401(await get({ authorization: `Token ${'a'.repeat(10 * 1024)}` }), 'Invalid token.');
    expect401(await get({ authorization: `Token ${"' OR '1'='1"}` }), 'Invalid token header. Token string should not contain spaces.');
    expect401(await get({ authorization: "Token '--;select/**/pg_sleep(5)" }), 'Invalid token.');
  });

  it('refuses two Authorization headers, even when both hold the right key', async () => {
    expect401(await get({ authorization: [`Token ${key}`, `Token ${key}`] }), 'Invalid token header. Only one Authorization header may be sent.');
    expect401(await get({ authorization: ['Bearer x', `Token ${key}`] }, '/api/open/'), 'Invalid token header. Only one Authorization header may be sent.');
  });

  it('sees both Authorization headers of a real HTTP request, where Node keeps only the first in request.headers', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.end(`GET /api/whoami/ HTTP/1.1\r\nHost: testserver\r\nAuthorization: Token ${key}\r\nAuthorization: Bearer other\r\nConnection: close\r\n\r\n`);
      });
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 401 /);
    expect(raw).toContain('Only one Authorization header may be sent.');
  });

  it('treats another scheme as no credentials: 401 where a user is needed, anonymous where not', async () => {
    expect401(await get({ authorization: `Bearer ${key}` }), NOT_PROVIDED);
    expect401(await get({ authorization: `Basic ${Buffer.from(`ada:${PASSWORD}`).toString('base64')}` }), NOT_PROVIDED);
    expect401(await get({ authorization: `Bearer ${'a'.repeat(10 * 1024)}` }), NOT_PROVIDED);
    expect((await get({ authorization: `Bearer ${key}` }, '/api/open/')).json()).toEqual({ username: null });
  });

  it('never takes a key from the URL', async () => {
    for (const url of [`/api/whoami/?token=${key}`, `/api/whoami/?auth_token=${key}`, `/api/whoami/?authorization=Token%20${key}`]) {
      expect401(await client.request('GET', url), NOT_PROVIDED);
    }
  });

  it('refuses a bad token even where anyone may call, and even with a valid session (token first)', async () => {
    expect401(await get({ authorization: 'Token 0000000000000000000000000000000000000000' }, '/api/open/'), 'Invalid token.');
    const browser = client.another();
    expect((await browser.logIn('ada', PASSWORD)).statusCode).toBe(302);
    expect401(await browser.request('GET', '/api/whoami/', { token: '0000000000000000000000000000000000000000' }), 'Invalid token.');
    // Another scheme is not ours: the session then authenticates the request.
    expect((await browser.request('GET', '/api/whoami/', { headers: { authorization: 'Bearer x' } })).json()).toMatchObject({ username: 'ada' });
  });

  it('judges a token request by the token alone: another user\'s session cookie does not change who it is', async () => {
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const browser = client.another();
    await browser.logIn('grace', PASSWORD);
    expect((await browser.request('GET', '/api/whoami/', { token: key })).json()).toMatchObject({ username: 'ada' });
    expect((await browser.request('GET', '/api/whoami/')).json()).toMatchObject({ username: grace.username });
  });

  it('refuses a deleted token at once, with "Invalid token."', async () => {
    expect((await client.request('GET', '/api/whoami/', { token: key })).statusCode).toBe(200);
    await deleteApiToken(latchkey.deps, ada);
    expect401(await client.request('GET', '/api/whoami/', { token: key }), 'Invalid token.');
    expect401(await client.request('GET', '/api/open/', { token: key }), 'Invalid token.');
  });

  it('refuses a deactivated user\'s token at once', async () => {
    expect((await client.request('GET', '/api/whoami/', { token: key })).statusCode).toBe(200);
    await deactivateUser(latchkey.deps, ada);
    expect401(await client.request('GET', '/api/whoami/', { token: key }), 'Invalid token.');
  });

  it('applies the permission to a token user as to a session user', async () => {
    const forbidden = await client.request('GET', '/api/staff-only/', { token: key });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
    expect((await client.request('GET', '/api/staff-only/', { token: await issueApiToken(latchkey.deps, grace) })).statusCode).toBe(200);
  });
});
