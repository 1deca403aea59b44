import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { englishText } from '../../core/i18n/message.js';
import { describeBrowser } from './sessions.js';

const PASSWORD = 'a long enough passphrase';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const SAFARI_IOS = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const EDGE = `${CHROME} Edg/126.0.0.0`;

describe('describeBrowser', () => {
  // A message (translated where the page shows it), in English here; a bare name is a string.
  const described = (userAgent: string) => {
    const description = describeBrowser(userAgent);
    return typeof description === 'string' ? description : englishText(description);
  };

  it('names the family, major version and system', () => {
    expect(described(FIREFOX)).toBe('Firefox 128 on Linux');
    expect(described(CHROME)).toBe('Chrome 126 on Windows');
    expect(described(EDGE)).toBe('Edge 126 on Windows');
    expect(described(SAFARI_IOS)).toBe('Safari 17 on iOS');
    expect(described('curl/8.5.0')).toBe('curl 8');
    expect(described('')).toBe('Unknown browser');
    expect(described('something odd')).toBe('Other browser');
    expect(described('Mozilla/5.0 (X11; Linux x86_64) Unheard/1.0')).toBe('Other browser on Linux');
  });
});

describe.each(testDatabaseKinds())('sessions page on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp() {
    latchkey = await createTestLatchkey({ kind });
    browser = await PageClient.create(latchkey);
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
  }

  const login = (client: PageClient, userAgent: string, login = 'ada') => client.post('/accounts/login/', { login, password: PASSWORD }, { headers: { 'user-agent': userAgent } });

  it("lists the user's own sessions with browser, IP and times, this one marked", async () => {
    await setUp();
    const phone = browser.another();
    await login(browser, FIREFOX);
    latchkey.clock.advance(90_000);
    await login(phone, SAFARI_IOS);
    await login(browser.another(), CHROME, 'bob');
    const page = await browser.get('/accounts/sessions/');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('Firefox 128 on Linux <strong class="lk-current">(this session)</strong>');
    expect(page.body).toContain('Safari 17 on iOS</td>');
    expect(page.body).not.toContain('Chrome 126');
    expect(page.body.match(/\(this session\)/g)).toHaveLength(1);
    expect(page.body).toContain('127.0.0.1');
    expect(page.body).toContain('>Jan 1, 2030, 12:00 AM UTC</time>');
    expect(page.body).toContain('>Jan 1, 2030, 12:01 AM UTC</time>');
    expect(page.body).not.toContain(browser.cookies.get('sessionid'));
  });

  it('ends every other session of the user, and only those', async () => {
    await setUp();
    const [phone, bob] = [browser.another(), browser.another()];
    await login(browser, FIREFOX);
    await login(phone, SAFARI_IOS);
    await login(bob, CHROME, 'bob');
    const ended = await browser.post('/accounts/sessions/', {});
    expect(ended.statusCode).toBe(302);
    expect(ended.headers.location).toBe('/accounts/sessions/');
    const page = await browser.get('/accounts/sessions/');
    expect(page.body).toContain('Signed out of 1 other session.');
    expect(page.body).toContain('No other session is signed in.');
    expect(await latchkey.deps.sessions.load(phone.cookies.get('sessionid'))).toBeUndefined();
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toBeDefined();
    expect(await latchkey.deps.sessions.load(bob.cookies.get('sessionid'))).toBeDefined();
  });

  it('is for signed-in users only, and refuses a POST without a CSRF token', async () => {
    await setUp();
    expect((await browser.get('/accounts/sessions/')).headers.location).toBe('/accounts/login/?next=%2Faccounts%2Fsessions%2F');
    const phone = browser.another();
    await login(browser, FIREFOX);
    await login(phone, SAFARI_IOS);
    expect((await browser.post('/accounts/sessions/', {}, { csrf: false })).statusCode).toBe(403);
    expect(await latchkey.deps.sessions.load(phone.cookies.get('sessionid'))).toBeDefined();
  });
});
