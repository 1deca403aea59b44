/**
 * The home page (templates/pages/home.html) and the way in from it: the sign-in and sign-up links,
 * who is signed in, and a login that lands on the user's own page.
 */
import type { User } from '@latchkey/core';
import { testDatabaseKinds, type TestLatchkey, type TestLatchkeyOptions } from '@latchkey/core/testing';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { projectSettings } from '../src/config/settings.js';
import { createProjectLatchkey } from './project.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('the home page on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  async function setUp(options: Pick<TestLatchkeyOptions, 'settings' | 'env'> = {}): Promise<void> {
    latchkey = await createProjectLatchkey({ kind, ...options });
    app = await buildApp(latchkey);
    await app.ready();
  }

  function addAda(): Promise<User> {
%% if username %%
    return latchkey.users.create({ username: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', password: PASSWORD, emailVerified: true });
%% else %%
    return latchkey.users.create({ email: 'ada@example.com', name: 'Ada Lovelace', password: PASSWORD, emailVerified: true });
%% endif %%
  }

  function inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    return app.inject({ ...options, headers: { host: 'testserver', ...options.headers } });
  }

  it('shows an anonymous visitor the sign-in and sign-up links', async () => {
    await setUp();
    const home = await inject({ url: '/' });
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain('You are not signed in.');
    expect(home.body).toContain('<a class="lk-button" id="sign-in-link" href="/accounts/login/">Sign in</a>');
    expect(home.body).toContain('<a id="sign-up-link" href="/accounts/signup/">');
  });

  it('offers no sign-up link while registration is closed', async () => {
    await setUp({ settings: { ACCOUNT_ALLOW_REGISTRATION: false } });
    const home = await inject({ url: '/' });
    expect(home.body).toContain('id="sign-in-link"');
    expect(home.body).not.toContain('/accounts/signup/');
    // No signup form (the page still ends with the language switch, a form of its own).
    expect((await inject({ url: '/accounts/signup/' })).body).not.toContain('action="/accounts/signup/"');
  });

  it('also when closed from the environment (LATCHKEY_ACCOUNT_ALLOW_REGISTRATION)', async () => {
    await setUp({ env: { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' } });
    expect((await inject({ url: '/' })).body).not.toContain('/accounts/signup/');
  });

  it('names the signed-in user and links to their page, never cached', async () => {
    await setUp();
    const ada = await addAda();
    const session = await latchkey.sessions.startSignedIn(ada);
    const home = await inject({ url: '/', cookies: { sessionid: session.cookieValue } });
    expect(home.statusCode).toBe(200);
    expect(home.headers['cache-control']).toBe('no-store');
%% if username %%
    expect(home.body).toContain('Signed in as ada.');
%% else %%
    expect(home.body).toContain('Signed in as ada@example.com.');
%% endif %%
    expect(home.body).toContain('href="/users/~redirect/"');
    expect(home.body).not.toContain('id="sign-in-link"');
    expect(home.body).not.toContain('id="sign-up-link"');
  });

  it("lands a login without `next` on /users/~redirect/, and from there on the user's own page", async () => {
    await setUp({ settings: { LOGIN_REDIRECT_URL: projectSettings.base?.LOGIN_REDIRECT_URL } });
    const ada = await addAda();
    const cookies = new Map<string, string>();
    const visit = async (options: InjectOptions): Promise<LightMyRequestResponse> => {
      const response = await inject({ ...options, cookies: Object.fromEntries(cookies) });
      for (const cookie of response.cookies) cookies.set(cookie.name, cookie.value);
      return response;
    };

    const login = await visit({ url: '/accounts/login/' });
    const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(login.body)![1]!;
%% if username %%
    const credentials = { login: 'ada', password: PASSWORD };
%% else %%
    const credentials = { login: 'ada@example.com', password: PASSWORD };
%% endif %%
    const loggedIn = await visit({
      method: 'POST',
      url: '/accounts/login/',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ csrfmiddlewaretoken: token, ...credentials }).toString(),
    });
    expect(loggedIn.statusCode).toBe(302);
    expect(loggedIn.headers.location).toBe('/users/~redirect/');

    const landing = await visit({ url: '/users/~redirect/' });
    expect(landing.statusCode).toBe(302);
%% if username %%
    expect(landing.headers.location).toBe(`/users/${ada.username!}/`);
%% else %%
    expect(landing.headers.location).toBe(`/users/${ada.id}/`);
%% endif %%

    const page = await visit({ url: String(landing.headers.location) });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Ada Lovelace');
    // The login's own message, queued for the first page rendered after it.
    expect(page.body).toContain('Successfully signed in');
  });
});
