/**
 * Attacks on the code ACCOUNT_LOGIN_BY_CODE_REQUIRED asks for after the password: a stolen password
 * alone reaches nothing; the code is single use, limited in tries and time, bound to the browser
 * whose login asked for it (not to a session planted before the password), gone at logout and
 * worthless once the password changes; its form needs the CSRF token. On every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser, setUserPassword } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const CONFIRM_PAGE = '/accounts/login/code/confirm/';

describe.each(testDatabaseKinds())('the required login code under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_REQUIRED: true, ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  function mailedCode(): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo('ada@example.com')?.text ?? '')?.[1];
    if (code === undefined) throw new Error('no code was mailed');
    return code;
  }

  const signedInUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const logIn = (as = browser) => as.post('/accounts/login/', { login: 'ada', password: PASSWORD });

  it('a stolen password alone opens no page of the account', async () => {
    await setUp();
    await logIn();
    for (const path of ['/accounts/email/', '/accounts/password/change/', '/accounts/2fa/', '/accounts/sessions/']) {
      expect((await browser.get(path)).headers.location, path).toMatch(/^\/accounts\/login\//);
    }
    expect(await signedInUser()).toBeNull();
  });

  it('a code works once: replayed after the sign-in, in the same browser or with its old cookie, it does nothing', async () => {
    await setUp();
    await logIn();
    const stopped = browser.cookies.get('sessionid')!;
    const code = mailedCode();
    expect((await browser.post(CONFIRM_PAGE, { code })).statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
    const replay = browser.another();
    replay.cookies.set('sessionid', stopped);
    await replay.post(CONFIRM_PAGE, { code });
    expect(await signedInUser(replay)).toBeNull();
  });

  it('guessing past MAX_ATTEMPTS gets nowhere, even with the right code last', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 3 });
    await logIn();
    const code = mailedCode();
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    for (let attempt = 0; attempt < 3; attempt += 1) expect((await browser.post(CONFIRM_PAGE, { code: wrong })).statusCode).toBe(400);
    await browser.post(CONFIRM_PAGE, { code });
    expect(await signedInUser()).toBeNull();
  });

  it('a session planted before the password cannot take the code: the stopped login lives under a new id', async () => {
    await setUp();
    await browser.get('/accounts/login/');
    const planted = (await latchkey.deps.sessions.create({ userId: null })).id;
    browser.cookies.set('sessionid', planted);
    await logIn();
    expect(browser.cookies.get('sessionid')).not.toBe(planted);
    const attacker = browser.another();
    attacker.cookies.set('sessionid', planted);
    await attacker.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(await signedInUser(attacker)).toBeNull();
  });

  it('logging out mid-stage drops the waiting login and its code', async () => {
    await setUp();
    await logIn();
    await browser.post('/accounts/logout/', {});
    await browser.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(await signedInUser()).toBeNull();
  });

  it('a password changed between the password and the code ends the login, even with the right code', async () => {
    await setUp();
    await logIn();
    await setUserPassword(latchkey.deps, ada, 'another long enough passphrase');
    const late = await browser.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(late.headers.location).toBe('/accounts/login/');
    expect(await signedInUser()).toBeNull();
  });

  it('an account deactivated between the password and the code gets no further', async () => {
    await setUp();
    await logIn();
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    expect((await browser.post(CONFIRM_PAGE, { code: mailedCode() })).headers.location).toBe('/accounts/inactive/');
    expect(await signedInUser()).toBeNull();
  });

  it('the code form refuses a post without the CSRF token (403), and the code still works with it', async () => {
    await setUp();
    await logIn();
    const code = mailedCode();
    expect((await browser.post(CONFIRM_PAGE, { code }, { csrf: false })).statusCode).toBe(403);
    expect(await signedInUser()).toBeNull();
    expect((await browser.post(CONFIRM_PAGE, { code })).statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
  });
});
