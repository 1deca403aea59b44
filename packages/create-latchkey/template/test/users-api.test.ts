/**
 * The project's users API (src/users/api.ts, cookiecutter-django's UserViewSet) as a client sees
 * it, with a token and with a browser session, on every database; with the user fields of the
 * project's own too.
 */
import { NAME_MAX_LENGTH, type User, type UsernameType } from '@latchkey/core';
import { testDatabaseKinds, type TestLatchkey, type TestLatchkeyOptions } from '@latchkey/core/testing';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { createProjectLatchkey, TEST_FIELD_MIGRATIONS, TEST_FIELDS } from './project.js';

const PASSWORD = 'a long enough passphrase';
%% if username %%
const ADA_LOGIN = 'ada';
%% else %%
const ADA_LOGIN = 'ada@example.com';
%% endif %%
const NOT_FOUND = { detail: 'Not found.' };
const NOT_AUTHENTICATED = { detail: 'Authentication credentials were not provided.' };

type Method = 'GET' | 'PUT' | 'PATCH';

interface Caller {
  call(method: Method, url: string, payload?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/** How this project shows and looks up a user (src/users/lookup.ts). */
const PROJECTS: { usernameType: UsernameType; identifier: '%%username_type%%'; lookupOf: (user: User) => string }[] = [
%% if username %%
  { usernameType: 'username', identifier: 'username', lookupOf: (user) => user.username! },
%% else %%
  { usernameType: 'email', identifier: 'email', lookupOf: (user) => String(user.id) },
%% endif %%
];

describe.each(testDatabaseKinds())('the users API on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function site(options: Omit<TestLatchkeyOptions, 'kind' | 'templateDirs'> = {}): Promise<void> {
    latchkey = await createProjectLatchkey({ kind, ...options });
    app = await buildApp(latchkey);
    await app.ready();
  }

  function addUser(handle: string, name: string): Promise<User> {
    const email = `${handle}@example.com`;
%% if username %%
    return latchkey.users.create({ username: handle, email, name, password: PASSWORD, emailVerified: true });
%% else %%
    return latchkey.users.create({ email, name, password: PASSWORD, emailVerified: true });
%% endif %%
  }

  function inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    return app.inject({ ...options, headers: { host: 'testserver', ...options.headers } });
  }

  function withHeaders(headers: Record<string, string>): Caller {
    return {
      call: (method, url, payload, extra = {}) =>
        inject({ method, url, headers: { ...headers, ...extra }, ...(payload === undefined ? {} : typeof payload === 'string' ? { payload } : { payload: payload as object }) }),
    };
  }

  async function tokenClient(user: User): Promise<Caller> {
    return withHeaders({ authorization: `Token ${await latchkey.apiTokens.issue(user)}` });
  }

  /**
   * A browser signed in through the login page: its cookies on every call, and on unsafe methods
   * the CSRF token in X-CSRFToken, as a page's JavaScript sends it (unless `csrf` is false).
   */
  async function browserClient(login: string, options: { csrf?: boolean } = {}): Promise<Caller> {
    const cookies = new Map<string, string>();
    const remember = (response: LightMyRequestResponse) => {
      for (const cookie of response.cookies) cookies.set(cookie.name, cookie.value);
    };
    remember(await inject({ method: 'GET', url: '/accounts/login/' }));
    const form = new URLSearchParams({ login, password: PASSWORD, csrfmiddlewaretoken: cookies.get('csrftoken') ?? '' });
    const loggedIn = await inject({
      method: 'POST',
      url: '/accounts/login/',
      payload: form.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      cookies: Object.fromEntries(cookies),
    });
    expect(loggedIn.statusCode).toBe(302);
    remember(loggedIn);
    expect(cookies.has('sessionid')).toBe(true);
    return {
      call: (method, url, payload, extra = {}) =>
        inject({
          method,
          url,
          cookies: Object.fromEntries(cookies),
          headers: { ...(method !== 'GET' && options.csrf !== false ? { 'x-csrftoken': cookies.get('csrftoken')! } : {}), ...extra },
          ...(payload === undefined ? {} : { payload: payload as object }),
        }),
    };
  }

  describe.each(PROJECTS)('in a project whose users sign in by $usernameType', ({ usernameType, identifier, lookupOf }) => {
    let ada: User;
    let grace: User;

    async function setUp(options: Omit<TestLatchkeyOptions, 'kind' | 'templateDirs' | 'usernameType'> = {}) {
      await site({ ...options, usernameType });
      ada = await addUser('ada', 'Ada Lovelace');
      grace = await addUser('grace', 'Grace Hopper');
    }
    const detailPath = (user: User) => `/api/users/${lookupOf(user)}/`;
    const shown = (user: User, name = user.name, siteUrl = 'http://testserver') => ({
%% if username %%
      [identifier]: user.username,
%% else %%
      [identifier]: user.email,
%% endif %%
      name,
      url: `${siteUrl}${detailPath(user)}`,
    });
    const stored = async (user: User) => (await latchkey.users.findById(user.id))!;

    it('with a token: lists only the requester, and answers /me/ and their own detail URL with the same object', async () => {
      await setUp();
      const client = await tokenClient(ada);
      const list = await client.call('GET', '/api/users/');
      expect(list.statusCode).toBe(200);
      expect(list.json()).toEqual([shown(ada)]);
      // Personal data: no cache keeps a copy.
      expect(list.headers['cache-control']).toBe('no-store');
      expect(list.headers['content-type']).toMatch(/^application\/json/);

      const me = await client.call('GET', '/api/users/me/');
      expect(me.statusCode).toBe(200);
      expect(me.json()).toEqual(shown(ada));
      expect(me.headers['cache-control']).toBe('no-store');

      // The url the API gives is where the user's own object is.
      const detail = await client.call('GET', new URL(me.json<{ url: string }>().url).pathname);
      expect(detail.statusCode).toBe(200);
      expect(detail.json()).toEqual(shown(ada));
      expect(Object.keys(detail.json<object>())).toEqual([identifier, 'name', 'url']);
    });

    it("answers another user's detail URL, by username or by id, exactly as one that names nobody: 404, and changes nothing", async () => {
      await setUp();
      const client = await tokenClient(ada);
%% if username %%
      const lookups = [grace.username!, String(grace.id), 'nobody', String(grace.id + 1000), grace.email];
      // The requester's own id is not the lookup field, and a username's case matters.
      lookups.push(String(ada.id), 'ADA');
%% else %%
      const lookups = [String(grace.id), 'nobody', String(grace.id + 1000), grace.email];
      // The requester's own address is not the lookup field.
      lookups.push(ada.email);
%% endif %%
      for (const lookup of lookups) {
        for (const method of ['GET', 'PUT', 'PATCH'] as const) {
          const response = await client.call(method, `/api/users/${encodeURIComponent(lookup)}/`, method === 'GET' ? undefined : { name: 'Changed' });
          expect(response.statusCode, `${method} ${lookup}`).toBe(404);
          expect(response.json(), `${method} ${lookup}`).toEqual(NOT_FOUND);
        }
      }
      expect(await stored(grace)).toEqual(grace);
      expect(await stored(ada)).toEqual(ada);
    });

    it('changes the name by PATCH and by PUT, ignoring every other field, and answers the updated object', async () => {
      await setUp();
      const client = await tokenClient(ada);
      const patched = await client.call('PATCH', detailPath(ada), { name: '  Augusta Ada King  ' });
      expect(patched.statusCode).toBe(200);
      expect(patched.json()).toEqual(shown(ada, 'Augusta Ada King'));
      expect(patched.headers['cache-control']).toBe('no-store');

      const readOnly = { username: 'grace', email: 'grace@example.com', is_staff: true, is_superuser: true, id: grace.id, url: 'https://evil.example/' };
      const put = await client.call('PUT', detailPath(ada), { ...readOnly, name: 'Countess of Lovelace' });
      expect(put.statusCode).toBe(200);
      expect(put.json()).toEqual(shown(ada, 'Countess of Lovelace'));
      expect(await stored(ada)).toEqual({ ...ada, name: 'Countess of Lovelace' });

      // The name is optional: a body without it changes nothing, whatever else it says.
      const ignored = await client.call('PATCH', detailPath(ada), readOnly);
      expect(ignored.statusCode).toBe(200);
      expect(ignored.json()).toEqual(shown(ada, 'Countess of Lovelace'));
      expect((await client.call('PUT', detailPath(ada), {})).json()).toEqual(shown(ada, 'Countess of Lovelace'));

      // A form body, as DRF's parsers also accept, and an empty name.
      const form = await client.call('PATCH', detailPath(ada), 'name=', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(form.statusCode).toBe(200);
      expect(form.json()).toEqual(shown(ada, ''));
      expect(await stored(ada)).toEqual({ ...ada, name: '' });
      expect(await stored(grace)).toEqual(grace);
    });

    it('refuses a name that is too long or not text with a field error, and a body that is not an object, writing nothing', async () => {
      await setUp();
      const client = await tokenClient(ada);
      const refusals: [unknown, Record<string, string[]>][] = [
        [{ name: 'x'.repeat(NAME_MAX_LENGTH + 1) }, { name: [`Ensure this field has no more than ${NAME_MAX_LENGTH} characters.`] }],
        [{ name: '\u{1F600}'.repeat(NAME_MAX_LENGTH + 1) }, { name: [`Ensure this field has no more than ${NAME_MAX_LENGTH} characters.`] }],
        [{ name: ['Ada'] }, { name: ['Not a valid string.'] }],
        [{ name: { first: 'Ada' } }, { name: ['Not a valid string.'] }],
        [{ name: true }, { name: ['Not a valid string.'] }],
        [{ name: null }, { name: ['This field may not be null.'] }],
        // A null character would make PostgreSQL fail the write: a field error like the others.
        [{ name: 'Ada\u0000' }, { name: ['Null characters are not allowed.'] }],
        [['name', 'Ada'], { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] }],
        ['Ada', { non_field_errors: ['Invalid data. Expected a dictionary, but got str.'] }],
      ];
      for (const [body, errors] of refusals) {
        for (const method of ['PUT', 'PATCH'] as const) {
          const response = await client.call(method, detailPath(ada), JSON.stringify(body), { 'content-type': 'application/json' });
          expect(response.statusCode, `${method} ${JSON.stringify(body)}`).toBe(400);
          expect(response.json(), `${method} ${JSON.stringify(body)}`).toEqual(errors);
        }
      }
      const lone = await client.call('PATCH', detailPath(ada), '{"name": "Ada \\ud800"}', { 'content-type': 'application/json' });
      expect(lone.statusCode).toBe(400);
      expect(Object.keys(lone.json<object>())).toEqual(['name']);
      // Malformed JSON and an unreadable media type are the client's mistakes, never a 500.
      const malformed = await client.call('PATCH', detailPath(ada), '{"name": ', { 'content-type': 'application/json' });
      expect(malformed.statusCode).toBe(400);
      const text = await client.call('PATCH', detailPath(ada), 'name=Ada', { 'content-type': 'text/plain' });
      expect(text.statusCode).toBe(415);
      expect(await stored(ada)).toEqual(ada);
    });

    it("reads the name as DRF's CharField does: a number as its text, the last of a repeated form field, 255 characters as a person counts them", async () => {
      await setUp();
      const client = await tokenClient(ada);
      expect((await client.call('PATCH', detailPath(ada), { name: 42 })).json()).toEqual(shown(ada, '42'));
      const twice = await client.call('PATCH', detailPath(ada), 'name=first&name=last', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(twice.json()).toEqual(shown(ada, 'last'));
      // 255 emoji are 510 UTF-16 units but 255 characters, as Django and PostgreSQL count them.
      const longest = '\u{1F600}'.repeat(NAME_MAX_LENGTH);
      const emoji = await client.call('PATCH', detailPath(ada), { name: longest });
      expect(emoji.statusCode).toBe(200);
      expect(emoji.json()).toEqual(shown(ada, longest));
      // Stored composed: the same name however the accent was typed.
      expect((await client.call('PUT', detailPath(ada), { name: 'Zoe\u0308' })).json()).toEqual(shown(ada, 'Zo\u00eb'));
      expect(await stored(ada)).toEqual({ ...ada, name: 'Zo\u00eb' });
    });

    it('with a browser session: reads, and changes the name only with the CSRF token', async () => {
      await setUp();
      const browser = await browserClient(ADA_LOGIN);
      expect((await browser.call('GET', '/api/users/')).json()).toEqual([shown(ada)]);
      expect((await browser.call('GET', '/api/users/me/')).json()).toEqual(shown(ada));
      expect((await browser.call('GET', detailPath(grace))).statusCode).toBe(404);

      const noCsrf = await (await browserClient(ADA_LOGIN, { csrf: false })).call('PATCH', detailPath(ada), { name: 'Forged' });
      expect(noCsrf.statusCode).toBe(403);
      expect(noCsrf.json<{ detail: string }>().detail).toMatch(/^CSRF Failed: /);
      expect((await stored(ada)).name).toBe(ada.name);

      const patched = await browser.call('PATCH', detailPath(ada), { name: 'Ada King' });
      expect(patched.statusCode).toBe(200);
      expect(patched.json()).toEqual(shown(ada, 'Ada King'));
      // Signing in set lastLogin; the API changed the name and nothing else.
      expect(await stored(ada)).toEqual({ ...ada, name: 'Ada King', lastLogin: latchkey.clock.now() });
    });

    it('refuses anyone without credentials, or with a key that is not a token, with 401 and WWW-Authenticate: Token', async () => {
      await setUp();
      const anonymous = withHeaders({});
      const forged = withHeaders({ authorization: `Token ${'0'.repeat(40)}` });
      for (const [method, url] of [
        ['GET', '/api/users/'],
        ['GET', '/api/users/me/'],
        ['GET', detailPath(ada)],
        ['GET', '/api/users/nobody/'],
        ['PUT', detailPath(ada)],
        ['PATCH', detailPath(ada)],
      ] as const) {
        const payload = method === 'GET' ? undefined : { name: 'Anonymous' };
        const refused = await anonymous.call(method, url, payload);
        expect(refused.statusCode, `${method} ${url}`).toBe(401);
        expect(refused.json(), `${method} ${url}`).toEqual(NOT_AUTHENTICATED);
        expect(refused.headers['www-authenticate'], `${method} ${url}`).toBe('Token');

        const invalid = await forged.call(method, url, payload);
        expect(invalid.statusCode, `${method} ${url}`).toBe(401);
        expect(invalid.json(), `${method} ${url}`).toEqual({ detail: 'Invalid token.' });
        expect(invalid.headers['www-authenticate'], `${method} ${url}`).toBe('Token');
      }
      expect(await stored(ada)).toEqual(ada);
    });

    it('builds url from SITE_URL, whatever Host and X-Forwarded-Host the request carries', async () => {
      // A permissive host list and a trusted proxy hop: the forged headers reach the app.
      await setUp({ settings: { SITE_URL: 'https://www.example.com', ALLOWED_HOSTS: ['*'], TRUST_PROXY_HOPS: 1 } });
      const client = await tokenClient(ada);
      const forged = { host: 'evil.example', 'x-forwarded-host': 'evil2.example', 'x-forwarded-proto': 'http' };
      const expected = shown(ada, ada.name, 'https://www.example.com');
      expect((await client.call('GET', '/api/users/me/', undefined, forged)).json()).toEqual(expected);
      expect((await client.call('GET', '/api/users/', undefined, forged)).json()).toEqual([expected]);
      expect((await client.call('PATCH', detailPath(ada), { name: ada.name }, forged)).json()).toEqual(expected);
    });

    it('is described in the OpenAPI schema, with its summaries, shapes and authentication', async () => {
      await setUp();
      await latchkey.users.update(ada, { isStaff: true });
      const response = await (await tokenClient(ada)).call('GET', '/api/schema/');
      expect(response.statusCode).toBe(200);
      const schema = response.json<{ paths: Record<string, Record<string, Record<string, unknown>>> }>();
      const { paths } = schema;
      expect(Object.keys(paths['/api/users/']!)).toEqual(['get']);
      expect(Object.keys(paths['/api/users/me/']!)).toEqual(['get']);
      expect(Object.keys(paths['/api/users/{lookup}/']!)).toEqual(['get', 'put', 'patch']);
      const operations = [paths['/api/users/']!.get!, paths['/api/users/me/']!.get!, ...Object.values(paths['/api/users/{lookup}/']!)];
      expect(operations.map((operation) => operation.operationId)).toEqual(['users_list', 'users_me_retrieve', 'users_retrieve', 'users_update', 'users_partial_update']);
      for (const operation of operations) {
        expect(operation.summary).toEqual(expect.any(String));
        expect(operation.tags).toEqual(['users']);
        expect(operation.security).toEqual([{ tokenAuth: [] }, { cookieAuth: [] }]);
        expect(Object.keys(operation.responses as object)).toContain('401');
      }
      const me = JSON.stringify(paths['/api/users/me/']!.get!.responses);
      expect(me).toContain(`"${identifier}"`);
%% if username %%
      expect(me).not.toContain('"email"');
%% else %%
      expect(me).not.toContain('"username"');
%% endif %%
      const patch = paths['/api/users/{lookup}/']!.patch!;
      expect(JSON.stringify(patch.requestBody)).toContain('"name"');
      expect(Object.keys(patch.responses as object)).toEqual(expect.arrayContaining(['200', '400', '404']));
    });

    it('answers 405 to the methods a view lacks, as the viewset does', async () => {
      await setUp();
      const authorization = `Token ${await latchkey.apiTokens.issue(ada)}`;
      for (const [method, url] of [
        ['POST', '/api/users/'],
        ['DELETE', detailPath(ada)],
        ['POST', detailPath(ada)],
        ['PATCH', '/api/users/me/'],
      ] as const) {
        const response = await inject({ method, url, headers: { authorization }, payload: { name: 'Changed' } });
        expect(response.statusCode, `${method} ${url}`).toBe(405);
      }
      expect(await latchkey.users.count()).toBe(2);
      expect(await stored(ada)).toEqual(ada);
    });
  });

%% if username %%
  describe('in a project whose users sign in by username', () => {
    it('gives every username its own working url, the longest and the non-ASCII ones too', async () => {
      await site();
      for (const username of ['z' + 'o'.repeat(149), 'Zoë.Ölçer+ops@home-lab_1', 'ユーザー']) {
        const user = await latchkey.users.create({ username, password: null, emailVerified: false });
        const client = await tokenClient(user);
        const me = await client.call('GET', '/api/users/me/');
        expect(me.json()).toMatchObject({ username, name: '' });
        const url = new URL(me.json<{ url: string }>().url);
        expect(url.origin).toBe('http://testserver');
        // Django's reverse() leaves @ and + as they are and percent-encodes the rest of UTF-8.
        expect(decodeURIComponent(url.pathname)).toBe(`/api/users/${username}/`);
        expect(url.pathname).not.toMatch(/%40|%2B/);
        const detail = await client.call('GET', url.pathname);
        expect(detail.statusCode, username).toBe(200);
        expect(detail.json()).toEqual(me.json());
        const patched = await client.call('PATCH', url.pathname, { name: 'Renamed' });
        expect(patched.json()).toEqual({ ...me.json<object>(), name: 'Renamed' });
      }
    });
  });
%% endif %%

  describe("with user fields of the project's own", () => {
    const { lookupOf } = PROJECTS[0]!;
    let ada: User;
    let grace: User;
    const detailPath = (user: User) => `/api/users/${lookupOf(user)}/`;
    /** The values of the tests' own fields (project/TEST_FIELDS) a user has in the database. */
    const fieldsOf = async (user: User) => latchkey.userFields.valuesOf(TEST_FIELDS.fields, (await latchkey.users.findById(user.id))!);
    /** Gives a user values of the tests' own fields, as the project's code would (they are no field of ProjectUserFields). */
    const setFields = (user: User, values: Record<string, unknown>) => latchkey.users.update(user, values);

    async function setUp(): Promise<Caller> {
      await site({ userFields: TEST_FIELDS, projectMigrations: TEST_FIELD_MIGRATIONS });
      ada = await addUser('ada', 'Ada Lovelace');
      grace = await addUser('grace', 'Grace Hopper');
      ada = await setFields(ada, { company: 'Analytical Engines', birth_date: '1815-12-10', newsletter: true, seats: 3, notes: 'Pays late.' });
      return tokenClient(ada);
    }

    it('gives every field declared api: true in the list, /me/ and the detail view, and no other', async () => {
      const client = await setUp();
      const me = await client.call('GET', '/api/users/me/');
      expect(me.statusCode).toBe(200);
      expect(me.json()).toEqual({
%% if username %%
        username: 'ada',
%% else %%
        email: 'ada@example.com',
%% endif %%
        name: 'Ada Lovelace',
        url: `http://testserver${detailPath(ada)}`,
        company: 'Analytical Engines',
        birth_date: '1815-12-10',
        seats: 3,
      });
      expect((await client.call('GET', '/api/users/')).json()).toEqual([me.json()]);
      expect((await client.call('GET', detailPath(ada))).json()).toEqual(me.json());
      // A user without values: each field's empty value.
      const other = await (await tokenClient(grace)).call('GET', '/api/users/me/');
      expect(other.json()).toMatchObject({ company: '', birth_date: null, seats: null });
      expect(other.json()).not.toHaveProperty('newsletter');
    });

    it('changes the editable ones by PATCH, ignoring the read-only ones and those outside the API, and answers the updated object', async () => {
      const client = await setUp();
      const patched = await client.call('PATCH', detailPath(ada), { company: '  Engines Ltd  ', seats: 500, newsletter: false, notes: 'Pays on time.' });
      expect(patched.statusCode).toBe(200);
      expect(patched.json()).toMatchObject({ name: 'Ada Lovelace', company: 'Engines Ltd', birth_date: '1815-12-10', seats: 3 });
      expect(await fieldsOf(ada)).toEqual({ company: 'Engines Ltd', birth_date: '1815-12-10', newsletter: true, seats: 3, notes: 'Pays late.' });

      // A form body too, as DRF's parsers accept it.
      expect((await client.call('PATCH', detailPath(ada), 'company=Difference+Engines', { 'content-type': 'application/x-www-form-urlencoded' })).json()).toMatchObject({ company: 'Difference Engines' });
      expect(await fieldsOf(ada)).toMatchObject({ company: 'Difference Engines', birth_date: '1815-12-10' });
      expect(await fieldsOf(grace)).toEqual({ company: '', birth_date: null, newsletter: false, seats: null, notes: '' });
    });

    it('refuses every bad value at once, under each field, and saves nothing', async () => {
      const client = await setUp();
      const before = await fieldsOf(ada);
      for (const method of ['PUT', 'PATCH'] as const) {
        const refused = await client.call(method, detailPath(ada), { name: 'Ada\u0000', company: 'x'.repeat(101), birth_date: '2999-01-01' });
        expect(refused.statusCode, method).toBe(400);
        expect(refused.json(), method).toEqual({
          name: ['Null characters are not allowed.'],
          company: ['Ensure this value has at most 100 characters (it has 101).'],
          birth_date: ['Enter a date in the past.'],
        });
        const noSuchDay = await client.call(method, detailPath(ada), { company: 'Engines', birth_date: '1815-02-30' });
        expect(noSuchDay.json(), method).toEqual({ birth_date: ['Enter a valid date.'] });
        // A value of the wrong type, as the view declares each field's.
        const wrongType = await client.call(method, detailPath(ada), { company: ['Engines'], birth_date: '1815-12-10' });
        expect(wrongType.json(), method).toEqual({ company: ['Not a valid string.'] });
      }
      expect(await fieldsOf(ada)).toEqual(before);
      expect((await latchkey.users.findById(ada.id))!.name).toBe('Ada Lovelace');
    });

    it('requires the required ones on PUT, as a full update, and not on PATCH', async () => {
      const client = await setUp();
      const put = await client.call('PUT', detailPath(ada), { name: 'Ada King', company: 'Engines' });
      expect(put.statusCode).toBe(400);
      expect(put.json()).toEqual({ birth_date: ['This field is required.'] });
      expect(await fieldsOf(ada)).toMatchObject({ company: 'Analytical Engines' });

      // Given, it is a full update of what was given; an optional field left out stays as it is.
      const full = await client.call('PUT', detailPath(ada), { name: 'Ada King', birth_date: '1815-12-11' });
      expect(full.statusCode).toBe(200);
      expect(full.json()).toMatchObject({ name: 'Ada King', company: 'Analytical Engines', birth_date: '1815-12-11' });
      const partial = await client.call('PATCH', detailPath(ada), { name: 'Countess of Lovelace' });
      expect(partial.statusCode).toBe(200);
      expect(partial.json()).toMatchObject({ name: 'Countess of Lovelace', birth_date: '1815-12-11' });
      // A required field cannot be emptied either way.
      expect((await client.call('PATCH', detailPath(ada), { birth_date: null })).json()).toEqual({ birth_date: ['This field is required.'] });
    });

    it('declares them in the OpenAPI schema: in the user, the read-only ones marked, and the writable ones in the request body', async () => {
      await setUp();
      await latchkey.users.update(ada, { isStaff: true });
      const schema = (await (await tokenClient(ada)).call('GET', '/api/schema/')).json<{ paths: Record<string, Record<string, Record<string, unknown>>> }>();
      const me = JSON.stringify(schema.paths['/api/users/me/']!.get!.responses);
      expect(me).toContain('"company":{"type":"string","description":"Company: Where you work, if you like."}');
      expect(me).toContain('"birth_date":{"type":"string","format":"date","description":"Date of birth","nullable":true}');
      expect(me).toMatch(/"seats":\{[^}]*"readOnly":true/);
      expect(me).not.toMatch(/newsletter|notes/);
      const body = JSON.stringify(schema.paths['/api/users/{lookup}/']!.patch!.requestBody);
      expect(body).toContain('"company"');
      expect(body).toContain('"birth_date"');
      expect(body).not.toMatch(/seats|newsletter|notes/);
    });
  });
});
