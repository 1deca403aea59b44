/**
 * allauth's dummy provider through the whole social pipeline on the pages, on every database:
 * configured in SOCIALACCOUNT_PROVIDERS, listed on the login page at /accounts/dummy/login/, its
 * stand-in page on the site, the callback, and the signup and sign-in that follow. And never in
 * production.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLatchkey } from '../../latchkey.js';
import { isLatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { answerDummyPage, dummyProviders, startDummySignIn, visitCallback, type DummyAnswer } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const ADA: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' };

describe.each(testDatabaseKinds())('the dummy provider on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
  });

  /** The button, the stand-in page (shown, then answered), and the callback: where the browser ends up. */
  async function throughDummy(person: DummyAnswer): Promise<string | undefined> {
    const page = await startDummySignIn(browser);
    expect((await browser.get(page.pathname + page.search)).statusCode).toBe(200);
    const callback = await answerDummyPage(browser, page, person);
    expect(callback.pathname).toBe('/accounts/dummy/login/callback/');
    return (await visitCallback(browser, callback)).headers.location;
  }

  it('signs a new person up and a returning one in, through the stand-in page', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() } });
    browser = await PageClient.create(latchkey);
    expect((await browser.get('/accounts/login/')).body).toContain('href="/accounts/dummy/login/"');
    const signupPage = (await browser.get('/accounts/signup/')).body;
    expect(signupPage).toContain('Or sign up with:');
    expect(signupPage).toContain('href="/accounts/dummy/login/"');
    expect(await throughDummy(ADA)).toBe('/');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(ada.name).toBe('Ada Lovelace');
    expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toMatchObject([{ provider: 'dummy', uid: 'ada-1815' }]);

    await browser.post('/accounts/logout/', {});
    expect(await throughDummy(ADA)).toBe('/');
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('is neither offered nor served, nor its page, where it is not configured', async () => {
    latchkey = await createTestLatchkey({ kind });
    browser = await PageClient.create(latchkey);
    expect((await browser.get('/accounts/dummy/authenticate/')).statusCode).toBe(404);
    expect((await browser.get('/accounts/dummy/login/')).statusCode).toBe(404);
    // No provider configured: the login and signup pages offer none.
    expect((await browser.get('/accounts/login/')).body).not.toContain('lk-providers');
    expect((await browser.get('/accounts/signup/')).body).not.toContain('lk-providers');
  });
});

describe('the dummy provider in production', () => {
  it('is refused at start-up', async () => {
    const production = testSettings({
      env: { NODE_ENV: 'production', LATCHKEY_SECRET_KEY: 'x'.repeat(50), LATCHKEY_ALLOWED_HOSTS: 'example.com', LATCHKEY_ADMIN_URL: 'hidden-admin/', DATABASE_URL: 'sqlite::memory:', EMAIL_URL: 'console://' },
    });
    const error = await createLatchkey({ settings: { ...production, SOCIALACCOUNT_PROVIDERS: dummyProviders() } }).then(() => undefined, (caught: unknown) => caught);
    expect(isLatchkeyError(error, 'configuration_invalid') && error.message).toContain('The dummy social provider signs anyone in as anyone');
  });
});
