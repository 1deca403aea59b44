/**
 * The adapters' hooks on where the browser is sent (docs/extending.md, "The adapters"), through
 * the pages and the headless API, on every database: AccountAdapter.isSafeUrl (allauth's
 * is_safe_url) over every target a request chose, and getInactiveAccountUrl (allauth's
 * respond_user_inactive).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AccountAdapter } from '../account/adapter.js';
import type { User } from '../account/model.js';
import { testDatabaseKinds } from '../testing/database.js';
import { answerDummyPage, dummyPageOf, dummyProviders, visitCallback } from '../testing/dummy-sign-in.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, type TestLatchkey, type TestLatchkeyOptions } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const SHOP = 'https://shop.example';

/** A project that owns a second host: `next` may lead there too, and never to its /private/ pages. */
class ShopAdapter extends AccountAdapter {
  override isSafeUrl(url: string): boolean {
    if (url.startsWith('/private/')) return false;
    return /^https?:/.test(url) ? new URL(url).origin === SHOP : super.isSafeUrl(url);
  }

  override getLoginRedirectUrl(_user: User): string {
    return '/home/';
  }

  override getInactiveAccountUrl(): string {
    return `${SHOP}/help/account-inactive/`;
  }
}

describe.each(testDatabaseKinds())("the adapters' redirect hooks, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(options: Partial<TestLatchkeyOptions> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, adapter: (settings) => new ShopAdapter(settings), ...options });
    browser = await PageClient.create(latchkey, { plugin: { headless: true } });
  }

  async function signIn(): Promise<void> {
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe('/home/');
  }

  it("isSafeUrl: a page follows a `next` at a host the adapter allows, sent encoded, and falls back for one it refuses", async () => {
    await setUp();
    await signIn();
    const landing = async (next: string) => (await browser.get(`/accounts/login/?next=${encodeURIComponent(next)}`)).headers.location;
    expect(await landing(`${SHOP}/orders/?id=7`)).toBe(`${SHOP}/orders/?id=7`);
    expect(await landing(`${SHOP}/caf\u00e9`)).toBe(`${SHOP}/caf%C3%A9`);
    expect(await landing('/orders/')).toBe('/orders/');
    for (const refused of ['https://evil.example/', `${SHOP}.evil.example/`, `${SHOP}/\r\nSet-Cookie: a=b`, '//shop.example/', '/private/x']) {
      const response = await browser.get(`/accounts/login/?next=${encodeURIComponent(refused)}`);
      expect(response.headers.location, refused).toBe('/home/');
      expect(response.headers['set-cookie'] ?? '', refused).not.toContain('a=b');
    }
    // The reauthentication page returns there too.
    const reauthenticated = await browser.post('/accounts/reauthenticate/', { password: PASSWORD, next: `${SHOP}/checkout/` });
    expect(reauthenticated.headers.location).toBe(`${SHOP}/checkout/`);
  });

  it("isSafeUrl: a login's `next` at a host the adapter allows is where it lands, through the login form and the admin's", async () => {
    await setUp();
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
    const login = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, next: `${SHOP}/orders/` });
    expect(login.headers.location).toBe(`${SHOP}/orders/`);
    const admin = browser.another();
    expect((await admin.post('/admin/login/', { username: 'ada', password: PASSWORD, next: `${SHOP}/reports/` })).headers.location).toBe(`${SHOP}/reports/`);
    expect((await admin.another().post('/admin/login/', { username: 'ada', password: PASSWORD, next: 'https://evil.example/' })).headers.location).toBe('/admin/');
  });

  it("isSafeUrl: a headless callback_url at a host the adapter allows gets the browser back there from the provider", async () => {
    await setUp({ settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() } });
    const start = (callback_url: string) => browser.post('/_allauth/browser/v1/auth/provider/redirect', { provider: 'dummy', process: 'login', callback_url });
    for (const refused of ['https://evil.example/cb', '/private/cb']) expect((await start(refused)).statusCode, refused).toBe(400);
    const page = dummyPageOf(await start(`${SHOP}/account/provider/callback`));
    const back = await visitCallback(browser, await answerDummyPage(browser, page, { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada' }));
    expect(back.headers.location).toBe(`${SHOP}/account/provider/callback`);
    expect(await latchkey.users.findByEmail('ada@example.com')).toBeDefined();
  });

  it('getInactiveAccountUrl: where an inactive account lands once its password is right; the headless API keeps its 400', async () => {
    await setUp();
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.users.deactivate(ada);
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe(`${SHOP}/help/account-inactive/`);
    // Someone who opens the account_inactive page itself is sent on there too.
    expect((await browser.get('/accounts/inactive/')).headers.location).toBe(`${SHOP}/help/account-inactive/`);
    // A wrong password still says nothing of the account.
    expect((await browser.post('/accounts/login/', { login: 'ada', password: 'not the password' })).statusCode).toBe(400);

    const app = new HeadlessTestClient(browser.app, 'app', latchkey);
    const refused = await app.post('/auth/login', { username: 'ada', password: PASSWORD });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ message: 'This account is inactive.', code: 'account_inactive' }]);
  });
});
