/**
 * allauth's dummy provider through the whole social pipeline on the pages: configured in
 * SOCIALACCOUNT_PROVIDERS, listed on the login page at /accounts/dummy/login/, its stand-in page
 * on the site, the callback, and the signup and sign-in that follow. And never in production.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLatchkey } from '../../latchkey.js';
import { isLatchkeyError } from '../../core/errors.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const DUMMY = { dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] } };

describe('the dummy provider on the pages', () => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
  });

  async function throughDummy(person: Record<string, string>): Promise<string> {
    const started = await browser.post('/accounts/dummy/login/', {});
    const authorize = new URL(started.headers.location!);
    expect(authorize.pathname).toBe('/accounts/dummy/authenticate/');
    expect((await browser.get(authorize.pathname + authorize.search)).statusCode).toBe(200);
    const state = authorize.searchParams.get('state')!;
    const redirectUri = authorize.searchParams.get('redirect_uri')!;
    const answered = await browser.post(authorize.pathname, { state, redirect_uri: redirectUri, action: 'authenticate', ...person });
    const callback = new URL(answered.headers.location!);
    expect(callback.pathname).toBe('/accounts/dummy/login/callback/');
    return (await browser.get(callback.pathname + callback.search)).headers.location!;
  }

  it('signs a new person up and a returning one in, through the stand-in page', async () => {
    latchkey = await createTestLatchkey({ settings: { SOCIALACCOUNT_PROVIDERS: DUMMY } });
    browser = await PageClient.create(latchkey);
    expect((await browser.get('/accounts/login/')).body).toContain('href="/accounts/dummy/login/"');
    const signupPage = (await browser.get('/accounts/signup/')).body;
    expect(signupPage).toContain('Or sign up with:');
    expect(signupPage).toContain('href="/accounts/dummy/login/"');
    expect(await throughDummy({ id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' })).toBe('/');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(ada.name).toBe('Ada Lovelace');
    expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toMatchObject([{ provider: 'dummy', uid: 'ada-1815' }]);

    await browser.post('/accounts/logout/', {});
    expect(await throughDummy({ id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' })).toBe('/');
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('is refused at start-up in production, and neither it nor its page is offered where it is not configured', async () => {
    const production = testSettings({
      env: { NODE_ENV: 'production', LATCHKEY_SECRET_KEY: 'x'.repeat(50), LATCHKEY_ALLOWED_HOSTS: 'example.com', LATCHKEY_ADMIN_URL: 'hidden-admin/', DATABASE_URL: 'sqlite::memory:', EMAIL_URL: 'console://' },
    });
    const error = await createLatchkey({ settings: { ...production, SOCIALACCOUNT_PROVIDERS: DUMMY } }).then(() => undefined, (caught: unknown) => caught);
    expect(isLatchkeyError(error, 'configuration_invalid') && error.message).toContain('The dummy social provider signs anyone in as anyone');

    latchkey = await createTestLatchkey();
    browser = await PageClient.create(latchkey);
    expect((await browser.get('/accounts/dummy/authenticate/')).statusCode).toBe(404);
    // No provider configured: the login and signup pages offer none.
    expect((await browser.get('/accounts/login/')).body).not.toContain('lk-providers');
    expect((await browser.get('/accounts/signup/')).body).not.toContain('lk-providers');
  });
});
