/**
 * Latchkey's route guards on routes of the project's own (its "Guarding your own routes":
 * node_modules/@latchkey/core/docs/extending.md): each guard on a page and on a JSON route, for
 * a stranger, for someone it refuses and for someone it lets through, and `request.user` behind
 * them.
 */
import type { User } from '@latchkey/core';
import { createTestLatchkey, testDatabaseKinds, type TestLatchkey } from '@latchkey/core/testing';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { projectSettings } from '../src/config/settings.js';
import { Browser, csrfTokenOf } from './browser.js';

const PASSWORD = 'a long enough passphrase';

/** What every guarded route answers once let through: who request.user is. */
async function whoAmI(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const user = await request.user;
  return reply.send({ id: user?.id });
}

describe.each(testDatabaseKinds())('route guards on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  /** An app as a project builds one: its own routes inside Latchkey's plugin, each behind a guard. */
  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind, usernameType: projectSettings.USERNAME_TYPE });
    app = Fastify();
    const { guards, apiGuards } = latchkey;
    await app.register(latchkey.plugin, {
      routes(scope) {
        scope.get('/members/', { preHandler: guards.signedIn }, whoAmI);
        scope.get('/staff/', { preHandler: guards.staff }, whoAmI);
        scope.get('/user-admin/', { preHandler: guards.permission('users.user', 'change') }, whoAmI);
        scope.get('/sensitive/', { preHandler: guards.recentlyAuthenticated }, whoAmI);
        scope.get('/json/members/', { preHandler: apiGuards.signedIn }, whoAmI);
        scope.get('/json/staff/', { preHandler: apiGuards.staff }, whoAmI);
        scope.get('/json/sensitive/', { preHandler: apiGuards.recentlyAuthenticated }, whoAmI);
        // An API route judges CSRF itself (a token needs none, a session does), so the form check is off.
        scope.post('/json/members/', { preHandler: apiGuards.signedIn, config: { csrf: false } }, whoAmI);
      },
    });
    await app.ready();
  }

  function addPerson(handle: string, roles: { isStaff?: boolean; isSuperuser?: boolean } = {}): Promise<User> {
%% if username %%
    return latchkey.users.create({ username: handle, email: `${handle}@example.com`, password: PASSWORD, emailVerified: true, ...roles });
%% else %%
    return latchkey.users.create({ email: `${handle}@example.com`, password: PASSWORD, emailVerified: true, ...roles });
%% endif %%
  }

  async function browserOf(user: User): Promise<Browser> {
    const browser = new Browser(app);
    browser.cookies.set('sessionid', (await latchkey.sessions.startSignedIn(user)).cookieValue);
    return browser;
  }

  /** A person signing in through the login page: that is an authentication the reauthentication window counts from. */
  async function signedInThroughLogin(handle: string): Promise<Browser> {
    const browser = new Browser(app);
    const form = await browser.get('/accounts/login/');
%% if username %%
    const login = handle;
%% else %%
    const login = `${handle}@example.com`;
%% endif %%
    const answer = await browser.post('/accounts/login/', [['csrfmiddlewaretoken', csrfTokenOf(form.body)], ['login', login], ['password', PASSWORD]]);
    expect(answer.statusCode).toBe(302);
    return browser;
  }

  describe('on pages', () => {
    it('sends a stranger to the login page, which comes back to the page', async () => {
      await setUp();
      const answer = await new Browser(app).get('/members/?tab=2');
      expect(answer.statusCode).toBe(302);
      expect(answer.headers.location).toBe(`/accounts/login/?next=${encodeURIComponent('/members/?tab=2')}`);
    });

    it('lets a signed-in user through, and request.user is them', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const answer = await (await browserOf(ada)).get('/members/');
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ id: ada.id });
    });

    it('refuses a deactivated user as a stranger', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const browser = await browserOf(ada);
      await latchkey.users.deactivate(ada);
      expect((await browser.get('/members/')).headers.location).toBe('/accounts/login/?next=%2Fmembers%2F');
    });

    it('lets only staff through the staff guard: anyone else signed in gets a 403 page', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const grace = await addPerson('grace', { isStaff: true });
      const refused = await (await browserOf(ada)).get('/staff/');
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain('403 Forbidden');
      expect((await (await browserOf(grace)).get('/staff/')).json()).toEqual({ id: grace.id });
    });

    it('lets a superuser through a permission guard, and refuses staff without the permission', async () => {
      await setUp();
      const grace = await addPerson('grace', { isStaff: true });
      const root = await addPerson('root', { isStaff: true, isSuperuser: true });
      expect((await (await browserOf(grace)).get('/user-admin/')).statusCode).toBe(403);
      expect((await (await browserOf(root)).get('/user-admin/')).json()).toEqual({ id: root.id });
    });

    it('sends a user who signed in long ago to reauthenticate, and back to the page after the password', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const browser = await signedInThroughLogin('ada');
      expect((await browser.get('/sensitive/')).json()).toEqual({ id: ada.id });
      latchkey.clock.advance(6 * 60 * 1000);
      const sent = await browser.get('/sensitive/');
      expect(sent.headers.location).toBe('/accounts/reauthenticate/?next=%2Fsensitive%2F');
      const form = await browser.get(sent.headers.location as string);
      const confirmed = await browser.post('/accounts/reauthenticate/', [['csrfmiddlewaretoken', csrfTokenOf(form.body)], ['password', PASSWORD], ['next', '/sensitive/']]);
      expect(confirmed.headers.location).toBe('/sensitive/');
      expect((await browser.get('/sensitive/')).json()).toEqual({ id: ada.id });
    });
  });

  describe('on JSON routes', () => {
    it('answers a stranger 401 in DRF shape, naming the Token scheme', async () => {
      await setUp();
      const answer = await new Browser(app).get('/json/members/');
      expect(answer.statusCode).toBe(401);
      expect(answer.headers['www-authenticate']).toBe('Token');
      expect(answer.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
    });

    it('lets a token through as well as a session, and refuses a wrong token even with a session', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const key = await latchkey.apiTokens.issue(ada);
      const byToken = await app.inject({ url: '/json/members/', headers: { host: 'testserver', authorization: `Token ${key}` } });
      expect(byToken.json()).toEqual({ id: ada.id });
      const browser = await browserOf(ada);
      expect((await browser.get('/json/members/')).json()).toEqual({ id: ada.id });
      const wrong = await browser.request({ method: 'GET', url: '/json/members/', headers: { authorization: `Token ${'0'.repeat(40)}` } });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual({ detail: 'Invalid token.' });
    });

    it('refuses a session POST without the CSRF token, and takes a token POST without one', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const refused = await (await browserOf(ada)).request({ method: 'POST', url: '/json/members/', payload: {} });
      expect(refused.statusCode).toBe(403);
      expect(refused.json<{ detail: string }>().detail).toMatch(/^CSRF Failed/);
      const key = await latchkey.apiTokens.issue(ada);
      const byToken = await app.inject({ method: 'POST', url: '/json/members/', payload: {}, headers: { host: 'testserver', authorization: `Token ${key}` } });
      expect(byToken.json()).toEqual({ id: ada.id });
    });

    it('answers a signed-in user the staff guard refuses 403 in DRF shape', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const key = await latchkey.apiTokens.issue(ada);
      const answer = await app.inject({ url: '/json/staff/', headers: { host: 'testserver', authorization: `Token ${key}` } });
      expect(answer.statusCode).toBe(403);
      expect(answer.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
    });

    it('answers 401 when the session signed in too long ago, and lets a fresh one through', async () => {
      await setUp();
      const ada = await addPerson('ada');
      const browser = await signedInThroughLogin('ada');
      expect((await browser.get('/json/sensitive/')).json()).toEqual({ id: ada.id });
      latchkey.clock.advance(6 * 60 * 1000);
      const stale = await browser.get('/json/sensitive/');
      expect(stale.statusCode).toBe(401);
      expect(stale.json()).toEqual({ detail: 'Reauthentication is required.' });
    });
  });
});
