import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser, deactivateUser } from '../../account/users.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { User } from '../../account/model.js';

/**
 * The login and logout routes here are test scaffolding standing in for the account pages: they
 * call the same RequestSessions that the pages will, so the session mechanics are proven now.
 */
async function appFor(latchkey: TestLatchkey, user: User): Promise<FastifyInstance> {
  const app = Fastify();
  await app.register(latchkey.plugin, {
    routes(scope) {
      scope.post('/login', { config: { csrf: false } }, async (request, reply) => {
        const remember = (request.query as { remember?: string }).remember === '1';
        await latchkey.requestSessions.login(request, reply, user, { remember });
        return { ok: true };
      });
      scope.post('/rotate', { config: { csrf: false } }, async (request, reply) => {
        await latchkey.requestSessions.rotate(request, reply);
        return { ok: true };
      });
      scope.get('/form', (request, reply) => ({ token: latchkey.csrfToken(request, reply) }));
      scope.post('/form', () => ({ saved: true }));
      scope.post('/logout', { config: { csrf: false } }, async (request, reply) => {
        await latchkey.requestSessions.logout(request, reply);
        return { ok: true };
      });
    },
  });
  app.get('/outside', (request, reply) => ({ token: latchkey.csrfToken(request, reply) }));
  app.get('/whoami', async (request) => ({ user: (await latchkey.currentUser(request))?.username ?? null }));
  await app.ready();
  return app;
}

describe.each(testDatabaseKinds())('sessions over HTTP on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function setUp(env: Record<string, string> = {}) {
    latchkey = await createTestLatchkey({ kind, env });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: 'a long enough passphrase', emailVerified: true });
    app = await appFor(latchkey, user);
    return user;
  }

  const sessionCookie = (response: { cookies: { name: string; value: string }[] }, name = 'sessionid') =>
    response.cookies.find((cookie) => cookie.name === name);

  it('logs in with an HttpOnly, SameSite=Lax browser-session cookie, and rotates the CSRF secret', async () => {
    await setUp();
    const response = await app.inject({ method: 'POST', url: '/login' });
    const cookie = sessionCookie(response);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(cookie).not.toHaveProperty('maxAge');
    expect(response.cookies.find((c) => c.name === 'csrftoken')?.value).toMatch(/^[a-zA-Z0-9]{32}$/);
    const whoami = await app.inject({ url: '/whoami', cookies: { sessionid: cookie!.value } });
    expect(whoami.json()).toEqual({ user: 'ada' });
  });

  it('"remember me" makes the cookie last SESSION_COOKIE_AGE, and a rotation keeps that choice', async () => {
    await setUp();
    const cookie = sessionCookie(await app.inject({ method: 'POST', url: '/login?remember=1' }));
    expect(cookie).toMatchObject({ maxAge: latchkey.settings.SESSION_COOKIE_AGE });
    const rotated = sessionCookie(await app.inject({ method: 'POST', url: '/rotate', cookies: { sessionid: cookie!.value } }));
    expect(rotated).toMatchObject({ maxAge: latchkey.settings.SESSION_COOKIE_AGE });
  });

  it('a session planted before login is replaced, and the planted id stops working', async () => {
    const user = await setUp();
    const planted = await latchkey.deps.sessions.create({ userId: null });
    const response = await app.inject({ method: 'POST', url: '/login', cookies: { sessionid: planted.id } });
    const issued = sessionCookie(response)!.value;
    expect(issued).not.toBe(planted.id);
    expect(await latchkey.deps.sessions.load(planted.id)).toBeUndefined();
    expect((await latchkey.deps.sessions.load(issued))?.userId).toBe(user.id);
  });

  it('logout ends the session on the server; replaying the cookie finds nobody', async () => {
    await setUp();
    const id = sessionCookie(await app.inject({ method: 'POST', url: '/login' }))!.value;
    const logout = await app.inject({ method: 'POST', url: '/logout', cookies: { sessionid: id } });
    expect(sessionCookie(logout)?.value).toBe('');
    expect((await app.inject({ url: '/whoami', cookies: { sessionid: id } })).json()).toEqual({ user: null });
  });

  it('a deactivated user is logged out at once, and reactivation does not revive the session', async () => {
    const user = await setUp();
    const id = sessionCookie(await app.inject({ method: 'POST', url: '/login' }))!.value;
    await deactivateUser(latchkey.deps, user);
    expect((await app.inject({ url: '/whoami', cookies: { sessionid: id } })).json()).toEqual({ user: null });
    await latchkey.deps.store.users.update(user.id, { isActive: true });
    expect((await app.inject({ url: '/whoami', cookies: { sessionid: id } })).json()).toEqual({ user: null });
  });

  it('an account deactivated by a direct database change or deleted is refused at once', async () => {
    const user = await setUp();
    const id = sessionCookie(await app.inject({ method: 'POST', url: '/login' }))!.value;
    await latchkey.deps.store.users.update(user.id, { isActive: false });
    expect((await app.inject({ url: '/whoami', cookies: { sessionid: id } })).json()).toEqual({ user: null });
    await latchkey.deps.store.users.delete(user.id);
    expect(await latchkey.deps.sessions.load(id)).toBeUndefined();
  });

  it("carries an anonymous session's data into the login, but never another user's", async () => {
    const user = await setUp();
    const other = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: null, emailVerified: true });
    const anonymous = await latchkey.deps.sessions.create({ userId: null, data: { cart: 3 } });
    const fromAnonymous = sessionCookie(await app.inject({ method: 'POST', url: '/login', cookies: { sessionid: anonymous.id } }))!.value;
    expect((await latchkey.deps.sessions.load(fromAnonymous))?.data).toMatchObject({ cart: 3 });
    const bobs = await latchkey.deps.sessions.create({ userId: other.id, data: { secretOfBob: true } });
    const fromBob = sessionCookie(await app.inject({ method: 'POST', url: '/login', cookies: { sessionid: bobs.id } }))!.value;
    const session = await latchkey.deps.sessions.load(fromBob);
    expect(session).toMatchObject({ userId: user.id });
    expect(session?.data).not.toHaveProperty('secretOfBob');
    expect(await latchkey.deps.sessions.load(bobs.id)).toBeUndefined();
  });

  it('rotation after a privilege change issues a new id and CSRF secret and kills the old id', async () => {
    await setUp();
    const before = sessionCookie(await app.inject({ method: 'POST', url: '/login' }))!.value;
    const response = await app.inject({ method: 'POST', url: '/rotate', cookies: { sessionid: before } });
    const after = sessionCookie(response)!.value;
    expect(after).not.toBe(before);
    expect(response.cookies.find((c) => c.name === 'csrftoken')?.value).toMatch(/^[a-zA-Z0-9]{32}$/);
    expect((await app.inject({ url: '/whoami', cookies: { sessionid: before } })).json()).toEqual({ user: null });
    expect((await app.inject({ url: '/whoami', cookies: { sessionid: after } })).json()).toEqual({ user: 'ada' });
  });

  it("protects a project's form registered inside the plugin, and refuses to hand out tokens outside it", async () => {
    await setUp();
    const form = await app.inject({ url: '/form' });
    const csrf = form.cookies.find((cookie) => cookie.name === 'csrftoken')!.value;
    const token = form.json<{ token: string }>().token;
    const post = (payload: string) =>
      app.inject({ method: 'POST', url: '/form', payload, cookies: { csrftoken: csrf }, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect((await post(`csrfmiddlewaretoken=${token}`)).json()).toEqual({ saved: true });
    expect((await post('')).statusCode).toBe(403);
    const outside = await app.inject({ url: '/outside' });
    expect(outside.statusCode).toBe(500);
  });

  it('in production the cookie is Secure with a __Host- name', async () => {
    await setUp({ LATCHKEY_SESSION_COOKIE_SECURE: 'true', LATCHKEY_SESSION_COOKIE_NAME: '__Host-sessionid' });
    const response = await app.inject({ method: 'POST', url: '/login' });
    expect(sessionCookie(response, '__Host-sessionid')).toMatchObject({ secure: true, httpOnly: true, path: '/' });
  });
});
