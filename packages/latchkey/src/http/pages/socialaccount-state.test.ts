/**
 * The state of a provider sign-in on the pages, on every database, through the dummy provider
 * (no network): a state is good for a limited time, measured on the site's clock (moved by the
 * test, never the wall clock), and a browser keeps only a handful of sign-ins pending at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SIGN_IN_STATE_SECONDS } from '../../socialaccount/flows/provider-login.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { answerDummyPage, dummyProviders, startDummySignIn, visitCallback, type DummyAnswer } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { urlFor } from '../../config/url-names.js';

const LOGIN_ERROR_PAGE = urlFor('socialaccount_login_error');

const ADA: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' };

describe.each(testDatabaseKinds())('the state of a provider sign-in on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() } });
    browser = await PageClient.create(latchkey);
  }

  const sessionUser = async () => (await latchkey.deps.sessions.load(browser.cookies.get('sessionid')))?.userId ?? null;

  it('refuses a callback that comes back after the state’s lifetime, signing nobody in', async () => {
    await setUp();
    const page = await startDummySignIn(browser);
    latchkey.clock.advance(SIGN_IN_STATE_SECONDS * 1000 + 1000);
    // The provider's answer itself is fresh (the dummy page signs it now): only the state is old.
    const answered = await visitCallback(browser, await answerDummyPage(browser, page, ADA));
    expect(answered.headers.location).toBe(LOGIN_ERROR_PAGE);
    expect(await sessionUser()).toBeNull();
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });

  it('accepts a callback within the state’s lifetime, once', async () => {
    await setUp();
    const page = await startDummySignIn(browser);
    latchkey.clock.advance(SIGN_IN_STATE_SECONDS * 1000 - 1000);
    const callback = await answerDummyPage(browser, page, ADA);
    expect((await visitCallback(browser, callback)).headers.location).toBe('/');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(await sessionUser()).toBe(ada.id);
    expect((await visitCallback(browser, callback)).headers.location).toBe(LOGIN_ERROR_PAGE);
  });

  it('keeps at most five sign-ins pending in a browser: a sixth drops the oldest', async () => {
    await setUp();
    const pages: URL[] = [];
    for (let started = 0; started < 6; started += 1) {
      pages.push(await startDummySignIn(browser));
      latchkey.clock.advance(1000);
    }
    const [oldest, ...kept] = pages;
    expect((await visitCallback(browser, await answerDummyPage(browser, oldest!, ADA))).headers.location).toBe(LOGIN_ERROR_PAGE);
    expect(await latchkey.deps.store.users.count()).toBe(0);
    // The five newest are each good (the same person: the browser's state carries into the login).
    for (const page of kept) expect((await visitCallback(browser, await answerDummyPage(browser, page, ADA))).headers.location).toBe('/');
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });
});
