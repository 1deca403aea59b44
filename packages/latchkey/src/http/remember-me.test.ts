/**
 * "Remember me" through the doors (login/remember.ts): the password form's box where the project
 * asks, a lasting session for a login that was asked nothing (as allauth's), the project's setting
 * over both, and a stopped login's choice kept to its end through whichever door finishes it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../account/model.js';
import { createUser } from '../account/users.js';
import type { SettingValues } from '../config/settings.js';
import { testDatabaseKinds } from '../testing/database.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../testing/mfa.js';
import { PageClient } from '../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('whether a login is remembered, through every door, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...settings } });
    browser = await PageClient.create(latchkey, { plugin: { headless: true } });
  }

  /** Whether the browser's session was remembered, as the server keeps it. */
  async function remembered(): Promise<unknown> {
    const session = await latchkey.deps.sessions.load(browser.cookies.get('sessionid'));
    expect(session?.userId).not.toBeNull();
    return session?.data._remember;
  }

  async function ada(): Promise<User> {
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  it('follows the login form’s box where the project asks', async () => {
    await setUp();
    await ada();
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, remember: 'on' });
    expect(await remembered()).toBe(true);
    await browser.post('/accounts/logout/', {});
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(await remembered()).toBe(false);
  });

  it('remembers a login that was asked nothing (a signup), unless the project says never', async () => {
    await setUp();
    await browser.post('/accounts/signup/', { email: 'ada@example.com', username: 'ada', password1: PASSWORD, password2: PASSWORD });
    expect(await remembered()).toBe(true);
    await browser.close();
    await latchkey.destroy();
    await setUp({ ACCOUNT_SESSION_REMEMBER: false });
    await browser.post('/accounts/signup/', { email: 'ada@example.com', username: 'ada', password1: PASSWORD, password2: PASSWORD });
    expect(await remembered()).toBe(false);
  });

  it('keeps the choice of a login stopped on the pages when the headless API finishes it', async () => {
    await setUp();
    const totp: ActivatedTotp = await activateTotpFor(latchkey, await ada());
    const stopped = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(stopped.headers.location).toBe('/accounts/2fa/authenticate/');
    const api = new HeadlessTestClient(browser.app, 'browser', latchkey);
    for (const [name, value] of browser.cookies) api.cookies.set(name, value);
    latchkey.clock.advance(1000);
    expect((await api.post('/auth/2fa/authenticate', { code: totp.code() })).status).toBe(200);
    for (const [name, value] of api.cookies) browser.cookies.set(name, value);
    expect(await remembered()).toBe(false);
  });
});
