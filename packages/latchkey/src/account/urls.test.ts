import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../config/load.js';
import { testDatabaseKinds } from '../testing/database.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../testing/latchkey.js';
import { addressForKey } from './email-confirmation.js';
import { requestPasswordReset, resetPasswordWithKey, userForResetKey } from './flows/password-reset.js';
import { signup } from './flows/signup.js';
import { createUser } from './users.js';
import { accountUrl, signInUrl } from './urls.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.9', userAgent: 'test' };

const FRONT_END = {
  account_confirm_email: 'https://app.example.com/verify-email/{key}',
  account_reset_password: 'https://app.example.com/password/reset',
  account_reset_password_from_key: 'https://app.example.com/password/reset/{key}?from=mail',
  account_signup: 'https://app.example.com/signup',
};

describe('accountUrl', () => {
  const pages = testSettings();

  it("in local mode links to the port the server runs on (a mailed link's port follows PORT)", () => {
    const local = loadSettings({ USERNAME_TYPE: 'username', SITE_NAME: 'Acme', DOMAIN_NAME: 'acme.example' }, { env: { PORT: '19080' }, cwd: mkdtempSync(join(tmpdir(), 'lk-urls-')) });
    expect(accountUrl(local, 'account_reset_password_from_key', 'k2')).toBe('http://localhost:19080/accounts/password/reset/key/k2/');
    expect(signInUrl(local)).toBe('http://localhost:19080/accounts/login/');
  });

  const spa = testSettings({ settings: { HEADLESS_FRONTEND_URLS: FRONT_END } });

  it('links to the account pages from SITE_URL when no front end is named', () => {
    expect(accountUrl(pages, 'account_confirm_email', 'k1')).toBe('http://testserver/accounts/confirm-email/k1/');
    expect(accountUrl(pages, 'account_reset_password_from_key', 'k2')).toBe('http://testserver/accounts/password/reset/key/k2/');
    expect(accountUrl(pages, 'account_reset_password')).toBe('http://testserver/accounts/password/reset/');
    expect(accountUrl(pages, 'account_signup')).toBe('http://testserver/accounts/signup/');
    expect(signInUrl(pages)).toBe('http://testserver/accounts/login/');
  });

  it("links to the front end's routes when they are named, with {key} replaced", () => {
    expect(accountUrl(spa, 'account_confirm_email', 'k1')).toBe('https://app.example.com/verify-email/k1');
    expect(accountUrl(spa, 'account_reset_password_from_key', 'k2')).toBe('https://app.example.com/password/reset/k2?from=mail');
    expect(accountUrl(spa, 'account_reset_password')).toBe('https://app.example.com/password/reset');
    expect(accountUrl(spa, 'account_signup')).toBe('https://app.example.com/signup');
    expect(signInUrl(spa)).toBe('https://app.example.com/signup');
  });

  it('URL-encodes the key, so that no key can change where the link leads', () => {
    const key = 'a/b?c#d&e=f g:h';
    expect(accountUrl(spa, 'account_confirm_email', key)).toBe('https://app.example.com/verify-email/a%2Fb%3Fc%23d%26e%3Df%20g%3Ah');
    expect(accountUrl(pages, 'account_confirm_email', key)).toBe('http://testserver/accounts/confirm-email/a%2Fb%3Fc%23d%26e%3Df%20g%3Ah/');
    const twice = testSettings({ settings: { HEADLESS_FRONTEND_URLS: { account_confirm_email: 'https://app.example.com/#/verify/{key}?again={key}' } } });
    expect(accountUrl(twice, 'account_confirm_email', 'k/1')).toBe('https://app.example.com/#/verify/k%2F1?again=k%2F1');
  });

  it('falls back to the page for each purpose the front end does not name', () => {
    const partial = testSettings({ settings: { HEADLESS_FRONTEND_URLS: { account_confirm_email: FRONT_END.account_confirm_email } } });
    expect(accountUrl(partial, 'account_confirm_email', 'k')).toBe('https://app.example.com/verify-email/k');
    expect(accountUrl(partial, 'account_reset_password_from_key', 'k')).toBe('http://testserver/accounts/password/reset/key/k/');
    expect(signInUrl(partial)).toBe('http://testserver/accounts/login/');
  });
});

/** Every http(s) link in a mail's text and HTML parts. */
function linksIn(mail: { text: string; html: string | undefined } | undefined): string[] {
  if (!mail) throw new Error('no such mail');
  return [...`${mail.text}\n${mail.html ?? ''}`.matchAll(/https?:\/\/[^\s"<>]+/g)].map((match) => match[0].replaceAll('&amp;', '&'));
}

describe.each(testDatabaseKinds())('the links in account emails on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(frontEnd: Record<string, string>) {
    latchkey = await createTestLatchkey({ kind, settings: { HEADLESS_FRONTEND_URLS: frontEnd } });
    return latchkey.deps;
  }

  it("send the confirmation mail to the front end's route with a key that confirms the address", async () => {
    const deps = await setUp(FRONT_END);
    await signup(deps, { username: 'ada', email: 'ada@example.com', password1: PASSWORD, password2: PASSWORD, client });
    const links = linksIn(latchkey.mailer.lastTo('ada@example.com'));
    const link = links.find((href) => href.startsWith('https://app.example.com/verify-email/'));
    expect(link).toBeDefined();
    const key = decodeURIComponent(link!.slice('https://app.example.com/verify-email/'.length));
    expect((await addressForKey(deps, key))?.email).toBe('ada@example.com');
    expect(links.filter((href) => href.includes('/accounts/'))).toEqual([]);
  });

  it("send the reset mail to the front end's route with a key that resets the password, and the notice after it to the reset route", async () => {
    const deps = await setUp(FRONT_END);
    const ada = await createUser(deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await requestPasswordReset(deps, { email: 'ada@example.com', client });
    await deps.background.idle();
    const link = linksIn(latchkey.mailer.lastTo('ada@example.com')).find((href) => href.startsWith('https://app.example.com/password/reset/'));
    const key = decodeURIComponent(/^https:\/\/app\.example\.com\/password\/reset\/([^?]+)\?from=mail$/.exec(link ?? '')?.[1] ?? '');
    expect((await userForResetKey(deps, key))?.id).toBe(ada.id);

    latchkey.mailer.clear();
    await resetPasswordWithKey(deps, { key, password1: 'another long passphrase', password2: 'another long passphrase', client });
    const notice = linksIn(latchkey.mailer.lastTo('ada@example.com'));
    expect(notice).toContain('https://app.example.com/password/reset');
    expect(notice.filter((href) => href.includes('/accounts/'))).toEqual([]);
  });

  it('send the "account already exists" notice to the front end too', async () => {
    const deps = await setUp(FRONT_END);
    await createUser(deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await signup(deps, { username: 'mallory', email: 'ada@example.com', password1: PASSWORD, password2: PASSWORD, client });
    const links = linksIn(latchkey.mailer.lastTo('ada@example.com'));
    expect(links).toEqual(expect.arrayContaining(['https://app.example.com/password/reset', 'https://app.example.com/signup']));
    expect(links.filter((href) => href.includes('/accounts/'))).toEqual([]);
  });

  it.each([
    ['named', FRONT_END, 'app.example.com'],
    ['not named', {}, 'testserver'],
  ])('never take the host from the request, front end %s: a forged Host or X-Forwarded-Host changes no link', async (_named, frontEnd, resetHost) => {
    const deps = await setUp(frontEnd);
    await createUser(deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const app = await HeadlessTestClient.createApp(latchkey);
    const api = new HeadlessTestClient(app, 'app', latchkey);
    const headers = { host: 'localhost', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    expect((await api.post('/auth/password/request', { email: 'ada@example.com' }, { headers })).status).toBe(200);
    await deps.background.idle();
    const links = linksIn(latchkey.mailer.lastTo('ada@example.com'));
    const resetLinks = new Set(links.filter((href) => href.includes('/reset/')));
    expect(resetLinks.size).toBe(1);
    for (const href of resetLinks) expect(new URL(href).host).toBe(resetHost);
    // Everything else (the footer) is SITE_URL's.
    for (const href of links.filter((link) => !resetLinks.has(link))) expect(new URL(href).host).toBe('testserver');
    await app.close();
  });

  it('link to the account pages at SITE_URL when no front end is named', async () => {
    const deps = await setUp({});
    await createUser(deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await signup(deps, { username: 'grace', email: 'grace@example.com', password1: PASSWORD, password2: PASSWORD, client });
    expect(linksIn(latchkey.mailer.lastTo('grace@example.com')).some((href) => href.startsWith('http://testserver/accounts/confirm-email/'))).toBe(true);
    await signup(deps, { username: 'mallory', email: 'ada@example.com', password1: PASSWORD, password2: PASSWORD, client });
    expect(linksIn(latchkey.mailer.lastTo('ada@example.com'))).toEqual(
      expect.arrayContaining(['http://testserver/accounts/password/reset/', 'http://testserver/accounts/login/']),
    );
    await requestPasswordReset(deps, { email: 'ada@example.com', client });
    await deps.background.idle();
    expect(linksIn(latchkey.mailer.lastTo('ada@example.com')).some((href) => href.startsWith('http://testserver/accounts/password/reset/key/'))).toBe(true);
  });
});
