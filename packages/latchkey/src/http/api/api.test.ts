/**
 * The API layer's scope through a project's own views: session authentication with DRF's CSRF
 * rule, permissions, DRF's error shapes (400, 401, 403, 404, 405, 413, 415, 500), CORS, and the
 * `api` option's absence. Every response is checked for `cache-control: no-store`.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser, deactivateUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import type { User } from '../../account/model.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews, type ApiRequestOptions } from '../../testing/api.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const NOT_PROVIDED = { detail: 'Authentication credentials were not provided.' };
const FRONT_END = 'https://app.example.com';

type Method = Parameters<ApiTestClient['request']>[0];

/** A client that checks, besides each test's own assertions, that no answer may be cached. */
class NoStoreClient extends ApiTestClient {
  override another(): NoStoreClient {
    return new NoStoreClient(this.app, this.site);
  }

  constructor(
    app: FastifyInstance,
    private readonly site: TestLatchkey,
  ) {
    super(app, site);
  }

  override async request(method: Method, url: string, options?: ApiRequestOptions): Promise<LightMyRequestResponse> {
    const response = await super.request(method, url, options);
    expect(response.headers['cache-control'], `${method} ${url} → ${response.statusCode}`).toBe('no-store');
    return response;
  }
}

describe.each(testDatabaseKinds())('API layer (session, permissions, errors) on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let ada: User;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<NoStoreClient> {
    latchkey = await createTestLatchkey({ kind, settings: { CORS_ALLOWED_ORIGINS: [FRONT_END], ...settings } });
    app = await createApiTestApp(latchkey, { routes: registerTestApiViews });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
    return new NoStoreClient(app, latchkey);
  }

  async function signedIn(client: NoStoreClient, login: string): Promise<NoStoreClient> {
    const response = await client.logIn(login, PASSWORD);
    expect(response.statusCode).toBe(302);
    return client;
  }

  describe('authentication and permissions', () => {
    it('answers an anonymous call to an authenticated view with 401 and the Token challenge', async () => {
      const client = await setUp();
      const response = await client.request('GET', '/api/whoami/');
      expect(response.statusCode).toBe(401);
      expect(response.headers['www-authenticate']).toBe('Token');
      expect(response.json()).toEqual(NOT_PROVIDED);
    });

    it('authenticates a logged-in browser by its session cookie', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      const response = await browser.request('GET', '/api/whoami/');
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ username: 'ada' });
    });

    it("sends the fields a view's answer declares and no others, whatever the view returns", async () => {
      const browser = await signedIn(await setUp(), 'ada');
      const response = await browser.request('GET', '/api/whoami/');
      expect(response.statusCode).toBe(200);
      // The view returns the whole user, password hash included; its declaration names three fields.
      expect(Object.keys(response.json<Record<string, unknown>>()).sort()).toEqual(['email', 'url', 'username']);
      expect(ada.password.length).toBeGreaterThan(20);
      expect(response.body).not.toContain(ada.password);
      // An answer declared without properties is sent whole, not as {}.
      expect((await browser.request('GET', '/api/items/1/')).json()).toEqual({ id: 1 });
    });

    it('requires the CSRF token of a session-authenticated unsafe request, as DRF does', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      const refused = await browser.request('POST', '/api/whoami/', { json: { a: 1 } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ detail: 'CSRF Failed: CSRF token missing.' });
      const wrong = await browser.request('POST', '/api/whoami/', { json: { a: 1 }, headers: { 'x-csrftoken': 'x'.repeat(64) } });
      expect(wrong.statusCode).toBe(403);
      expect(wrong.json<{ detail: string }>().detail).toMatch(/^CSRF Failed: /);
      const foreign = await browser.request('POST', '/api/whoami/', { json: { a: 1 }, csrf: true, headers: { origin: 'https://evil.example' } });
      expect(foreign.statusCode).toBe(403);
      expect(foreign.json<{ detail: string }>().detail).toMatch(/^CSRF Failed: Origin checking failed/);
      const crossSite = await browser.request('POST', '/api/whoami/', { json: { a: 1 }, csrf: true, headers: { 'sec-fetch-site': 'cross-site' } });
      expect(crossSite.statusCode).toBe(403);
      expect(crossSite.json()).toEqual({ detail: 'CSRF Failed: Cross-site request refused.' });
      for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
        expect((await browser.request(method, '/api/items/1/', { json: { name: 'x' } })).statusCode, method).toBe(403);
      }
      const accepted = await browser.request('POST', '/api/whoami/', { json: { a: 1 }, csrf: true });
      expect(accepted.statusCode).toBe(201);
      expect(accepted.json()).toEqual({ username: 'ada', received: { a: 1 } });
    });

    it('needs no CSRF token from an anonymous caller, whom a cookie does not authenticate', async () => {
      const client = await setUp();
      const response = await client.request('POST', '/api/open/', { json: { a: 1 } });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ username: null, received: { a: 1 } });
    });

    it('also refuses a session-authenticated unsafe request without CSRF on a view anyone may call', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      expect((await browser.request('POST', '/api/open/', { json: {} })).statusCode).toBe(403);
      expect((await browser.request('GET', '/api/open/')).json()).toEqual({ username: 'ada' });
    });

    it('does not authenticate a browser stopped at the MFA step', async () => {
      const client = await setUp();
      await activateTotpFor(latchkey, ada);
      const response = await client.logIn('ada', PASSWORD);
      expect(response.statusCode).toBe(302);
      expect(response.headers.location).toContain('/accounts/2fa/authenticate/');
      expect((await client.request('GET', '/api/whoami/')).statusCode).toBe(401);
      expect((await client.request('GET', '/api/open/')).json()).toEqual({ username: null });
    });

    it('refuses a deactivated user\'s session at once', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      await deactivateUser(latchkey.deps, ada);
      const response = await browser.request('GET', '/api/whoami/');
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual(NOT_PROVIDED);
    });

    it('gives a staff view to staff only: 401 anonymous, 403 for other users', async () => {
      const client = await setUp();
      const anonymous = await client.request('GET', '/api/staff-only/');
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.headers['www-authenticate']).toBe('Token');
      const user = await signedIn(client.another(), 'ada');
      const forbidden = await user.request('GET', '/api/staff-only/');
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.headers['www-authenticate']).toBeUndefined();
      expect(forbidden.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
      const staff = await signedIn(client.another(), 'grace');
      expect((await staff.request('GET', '/api/staff-only/')).json()).toEqual({ ok: true });
    });

    it('builds absolute URLs from SITE_URL, never from the request\'s Host', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      const response = await browser.request('GET', '/api/whoami/', { headers: { 'x-forwarded-host': 'evil.example' } });
      expect(response.json<{ url: string }>().url).toBe(`${latchkey.settings.SITE_URL.replace(/\/$/, '')}/api/users/${ada.id}/`);
    });
  });

  describe('error shapes', () => {
    it('answers an unknown path under /api/ with 404 {"detail": "Not found."}', async () => {
      const client = await setUp();
      for (const url of ['/api/nothing/', '/api/', '/api', '/api/whoami/extra/']) {
        const response = await client.request('GET', url);
        expect(response.statusCode, url).toBe(404);
        expect(response.json()).toEqual({ detail: 'Not found.' });
      }
      const post = await client.request('POST', '/api/nothing/', { json: { a: 1 } });
      expect(post.statusCode).toBe(404);
      expect(post.json()).toEqual({ detail: 'Not found.' });
    });

    it('answers a view\'s 404 and field errors in DRF\'s shapes, and a flow\'s refusal under its field', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      const missing = await browser.request('GET', '/api/items/2/');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ detail: 'Not found.' });
      const invalid = await browser.request('PATCH', '/api/items/1/', { json: {}, csrf: true });
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json()).toEqual({ name: ['This field is required.'] });
      const refused = await browser.request('PATCH', '/api/items/1/', { json: { flow: 'refuse' }, csrf: true });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({ name: ['The name is taken.'] });
      const deleted = await browser.request('DELETE', '/api/items/1/', { csrf: true });
      expect(deleted.statusCode).toBe(204);
      expect(deleted.body).toBe('');
    });

    it('answers a method the view lacks with 405 and an Allow header, after authentication as DRF does', async () => {
      const client = await setUp();
      const anonymous = await client.request('DELETE', '/api/whoami/');
      expect(anonymous.statusCode).toBe(401);
      const browser = await signedIn(client.another(), 'ada');
      const response = await browser.request('DELETE', '/api/whoami/', { csrf: true });
      expect(response.statusCode).toBe(405);
      expect(response.json()).toEqual({ detail: 'Method "DELETE" not allowed.' });
      expect(response.headers.allow).toBe('GET, POST, HEAD, OPTIONS');
      const put = await browser.request('PUT', '/api/items/1/', { json: {}, csrf: true });
      expect(put.statusCode).toBe(405);
      expect(put.json()).toEqual({ detail: 'Method "PUT" not allowed.' });
      expect(put.headers.allow).toBe('GET, PATCH, DELETE, HEAD, OPTIONS');
    });

    it('answers HEAD with the GET view, without a body', async () => {
      const browser = await signedIn(await setUp(), 'ada');
      const response = await browser.request('HEAD', '/api/whoami/');
      expect(response.statusCode).toBe(200);
      expect(response.body).toBe('');
    });

    it('refuses a body that is not JSON or a form with 415, naming its type as DRF does', async () => {
      const client = await setUp();
      const cases: [string | undefined, string][] = [
        ['text/plain', 'Unsupported media type "text/plain" in request.'],
        ['text/plain;charset=UTF-8', 'Unsupported media type "text/plain;charset=UTF-8" in request.'],
        ['multipart/form-data; boundary=x', 'Unsupported media type "multipart/form-data; boundary=x" in request.'],
        ['application/xml', 'Unsupported media type "application/xml" in request.'],
        ['', 'Unsupported media type "" in request.'],
        [undefined, 'Unsupported media type "" in request.'],
      ];
      for (const [type, detail] of cases) {
        const response = await client.request('POST', '/api/open/', { body: '{"a": 1}', headers: type === undefined ? {} : { 'content-type': type } });
        expect(response.statusCode, String(type)).toBe(415);
        expect(response.json()).toEqual({ detail });
      }
    });

    it('answers malformed JSON with 400 "JSON parse error - ...", never a 500', async () => {
      const client = await setUp();
      for (const body of ['{"a": ', '{a: 1}', 'nul', '\u0000', '{"__proto__": {"isStaff": true}}', '{"constructor": {"prototype": {}}}', '\xff\xfe{']) {
        const response = await client.request('POST', '/api/open/', { body, headers: { 'content-type': 'application/json' } });
        expect(response.statusCode, body).toBe(400);
        expect(response.json<{ detail: string }>().detail).toMatch(/^JSON parse error - /);
      }
      // Nested past what the parser's stack holds: a parse error in our words, nothing about the server.
      const deep = await client.request('POST', '/api/open/', { body: `${'['.repeat(10_000)}${']'.repeat(10_000)}`, headers: { 'content-type': 'application/json' } });
      expect(deep.statusCode).toBe(400);
      expect(deep.json()).toEqual({ detail: 'JSON parse error - The JSON is nested too deeply.' });
    });

    it('reads JSON and form bodies alike; an empty JSON body is no data', async () => {
      const client = await setUp();
      expect((await client.request('POST', '/api/open/', { json: { name: 'Ada', tags: ['x'] } })).json()).toEqual({ username: null, received: { name: 'Ada', tags: ['x'] } });
      // A repeated form field reads as its last value, as Django's QueryDict gives it.
      const form = await client.request('POST', '/api/open/', { body: 'name=Ada&name=Grace&__proto__=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.json()).toEqual(JSON.parse('{"username": null, "received": {"name": "Grace", "__proto__": "x"}}'));
      expect(Object.getPrototypeOf(form.json<{ received: object }>().received)).toBe(Object.prototype);
      const charset = await client.request('POST', '/api/open/', { body: '{"name": "Ada"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
      expect(charset.json()).toEqual({ username: null, received: { name: 'Ada' } });
      const empty = await client.request('POST', '/api/open/', { body: '', headers: { 'content-type': 'application/json' } });
      expect(empty.statusCode).toBe(200);
      expect(empty.json()).toEqual({ username: null, received: null });
    });

    it("refuses a body its view's schema does not allow, in DRF's shapes, before the view's handler runs", async () => {
      const client = await setUp();
      // The caller is judged first: an anonymous client learns nothing of what the body lacks.
      expect((await client.request('POST', '/api/notes/', { json: {} })).statusCode).toBe(401);
      const browser = await signedIn(client, 'ada');
      const refusals: [unknown, Record<string, string[]>][] = [
        [{}, { title: ['This field is required.'], stars: ['This field is required.'] }],
        [{ title: null, stars: '3' }, { title: ['This field may not be null.'], stars: ['A valid integer is required.'] }],
        [{ title: ['x'], stars: 9, colour: 'blue', pinned: 'yes' }, {
          title: ['Not a valid string.'],
          stars: ['Ensure this value is less than or equal to 5.'],
          colour: ['"blue" is not a valid choice.'],
          pinned: ['Must be a valid boolean.'],
        }],
        [{ title: 'x'.repeat(21), stars: 0 }, { title: ['Ensure this field has no more than 20 characters.'], stars: ['Ensure this value is greater than or equal to 1.'] }],
        [['title'], { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] }],
      ];
      for (const [json, errors] of refusals) {
        const response = await browser.request('POST', '/api/notes/', { json, csrf: true });
        expect(response.statusCode, JSON.stringify(json)).toBe(400);
        expect(response.json(), JSON.stringify(json)).toEqual(errors);
      }
      // A number where text is declared is its text, as DRF's CharField reads it; extra fields pass to the view.
      const accepted = await browser.request('POST', '/api/notes/', { json: { title: 42, stars: 5, extra: true }, csrf: true });
      expect(accepted.statusCode).toBe(201);
      expect(accepted.json()).toEqual({ received: { title: 42, stars: 5, extra: true } });
    });

    it('judges the caller before the body: an anonymous client sending garbage to a protected view gets 401', async () => {
      const client = await setUp();
      expect((await client.request('POST', '/api/whoami/', { body: '{', headers: { 'content-type': 'application/json' } })).statusCode).toBe(401);
      expect((await client.request('POST', '/api/whoami/', { body: 'x', headers: { 'content-type': 'text/plain' } })).statusCode).toBe(401);
    });

    it('refuses a body over 1 MiB with 413 before reading it in full', async () => {
      const client = await setUp();
      const response = await client.request('POST', '/api/open/', { body: JSON.stringify({ password: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'content-type': 'application/json' } });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({ detail: 'Request body is too large.' });
    });

    it('answers a view\'s unexpected failure with a bare 500: the cause goes to the log only', async () => {
      latchkey = await createTestLatchkey({ kind });
      const logLines: string[] = [];
      app = await createApiTestApp(latchkey, { routes: registerTestApiViews, logLines });
      const response = await new NoStoreClient(app, latchkey).request('GET', '/api/broken/');
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ detail: 'A server error occurred.' });
      expect(response.body).not.toContain('secret_table');
      expect(logLines.join('\n')).toContain('relation \\"secret_table\\" does not exist');
    });
  });

  describe('CORS', () => {
    it('lets an allowed front end call the API with credentials, and tells another origin nothing', async () => {
      const client = await setUp();
      const preflight = await client.request('OPTIONS', '/api/whoami/', {
        headers: { origin: FRONT_END, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(FRONT_END);
      expect(preflight.headers['access-control-allow-credentials']).toBe('true');
      expect(String(preflight.headers['access-control-allow-headers']).split(', ')).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-csrftoken']));
      expect(String(preflight.headers['access-control-allow-methods'])).toContain('DELETE');
      const call = await client.request('GET', '/api/open/', { headers: { origin: FRONT_END } });
      expect(call.headers['access-control-allow-origin']).toBe(FRONT_END);

      const foreignPreflight = await client.request('OPTIONS', '/api/whoami/', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(foreignPreflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(foreignPreflight.headers['access-control-allow-headers']).toBeUndefined();
      const foreign = await client.request('GET', '/api/open/', { headers: { origin: 'https://evil.example' } });
      expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
      expect(foreign.headers.vary).toContain('Origin');
    });

    it('allows no origin by default', async () => {
      latchkey = await createTestLatchkey({ kind });
      app = await createApiTestApp(latchkey, { routes: registerTestApiViews });
      const client = new NoStoreClient(app, latchkey);
      const preflight = await client.request('OPTIONS', '/api/open/', { headers: { origin: FRONT_END, 'access-control-request-method': 'GET' } });
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('registration', () => {
    it('serves nothing under /api/ or /_allauth/ without the api and headless options (use_drf other than y)', async () => {
      latchkey = await createTestLatchkey({ kind });
      app = await createApiTestApp(latchkey, { api: false });
      const urls = [
        ['POST', '/api/auth-token/'],
        ['DELETE', '/api/auth-token/'],
        ['GET', '/api/schema/'],
        ['GET', '/api/docs/'],
        ['GET', '/api/'],
        ['GET', '/_allauth/browser/v1/auth/session'],
        ['POST', '/_allauth/app/v1/auth/login'],
        ['GET', '/_allauth/openapi.json'],
      ] as const;
      for (const [method, url] of urls) {
        const response = await app.inject({ method, url, headers: { host: 'testserver' } });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
      }
      expect(app.printRoutes()).not.toContain('api');
      expect(app.printRoutes()).not.toContain('allauth');
    });

    it('serves its routes alongside the headless API, each with its own error shapes', async () => {
      latchkey = await createTestLatchkey({ kind });
      app = await createApiTestApp(latchkey, { routes: registerTestApiViews, headless: true });
      const client = new ApiTestClient(app, latchkey);
      expect((await client.request('GET', '/api/nothing/')).json()).toEqual({ detail: 'Not found.' });
      expect((await client.request('GET', '/_allauth/browser/v1/nothing')).json()).toEqual({ status: 404 });
      expect((await client.request('GET', '/api/whoami/')).statusCode).toBe(401);
      expect((await client.request('GET', '/_allauth/browser/v1/auth/session')).statusCode).toBe(401);
    });

    it('refuses a view outside /api/, on Latchkey\'s own URLs, or without methods', async () => {
      latchkey = await createTestLatchkey({ kind });
      const view = { methods: { get: { summary: 'x', responses: {}, handler: () => Promise.resolve({}) } } };
      await expect(createApiTestApp(latchkey, { routes: (api) => api.view('/users/', view) })).rejects.toThrow(/under \/api\//);
      await expect(createApiTestApp(latchkey, { routes: (api) => api.view('/api/auth-token/', view) })).rejects.toThrow(/Latchkey's own/);
      await expect(createApiTestApp(latchkey, { routes: (api) => api.view('/api/empty/', { methods: {} }) })).rejects.toThrow(/no methods/);
      await expect(
        createApiTestApp(latchkey, {
          routes: (api) => {
            api.view('/api/twice/', view);
            api.view('/api/twice/', view);
          },
        }),
      ).rejects.toThrow(/Two API views at \/api\/twice\//);
      await expect(createApiTestApp(latchkey, { routes: (api) => api.view('/api/bad/:id(/', view) })).rejects.toThrow(/Invalid regexp/);
      app = await createApiTestApp(latchkey);
    });
  });
});
