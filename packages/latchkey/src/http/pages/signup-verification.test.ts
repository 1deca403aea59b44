import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const LANDING = '/users/~redirect/';

/**
 * The pages' side of a signup's login waiting at verify_email: ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION
 * decides whether confirming in the same browser signs the person in, after a signup as after a
 * password login; a confirmation in another browser never does.
 */
describe.each(testDatabaseKinds())('signup pages and login on email confirmation on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(loginOnConfirmation: boolean) {
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: loginOnConfirmation, LOGIN_REDIRECT_URL: LANDING },
    });
    browser = await PageClient.create(latchkey);
  }

  const signUp = (next = '') => browser.post('/accounts/signup/', { email: 'grace@example.com', username: 'grace', password1: PASSWORD, password2: PASSWORD, next });
  const mailedLink = (address: string) => /http:\/\/testserver(\/accounts\/confirm-email\/[^/\s]+\/)/.exec(latchkey.mailer.lastTo(address)?.text ?? '')![1]!;
  const signedInUserId = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const grace = async () => (await latchkey.deps.store.users.findByUsername('grace'))!;

  it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION on, confirming after signup in the same browser signs in, to next', async () => {
    await setUp(true);
    expect((await signUp('/accounts/email/')).headers.location).toBe('/accounts/confirm-email/');
    expect(await signedInUserId(browser)).toBeNull();
    const confirmed = await browser.post(mailedLink('grace@example.com'), {});
    expect(confirmed.headers.location).toBe('/accounts/email/');
    expect(await signedInUserId(browser)).toBe((await grace()).id);
  });

  it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION on, a signup confirmed without next lands on LOGIN_REDIRECT_URL', async () => {
    await setUp(true);
    await signUp();
    expect((await browser.post(mailedLink('grace@example.com'), {})).headers.location).toBe(LANDING);
    expect(await signedInUserId(browser)).toBe((await grace()).id);
  });

  it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION off, confirming after signup only verifies: the person signs in on the login page', async () => {
    await setUp(false);
    await signUp();
    const confirmed = await browser.post(mailedLink('grace@example.com'), {});
    expect(confirmed.headers.location).toBe('/accounts/login/');
    expect(await signedInUserId(browser)).toBeNull();
    expect((await latchkey.deps.store.emailAddresses.listForUser((await grace()).id))[0]?.verified).toBe(true);
    const login = await browser.post('/accounts/login/', { login: 'grace', password: PASSWORD });
    expect(login.headers.location).toBe(LANDING);
    expect(await signedInUserId(browser)).toBe((await grace()).id);
  });

  it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION off, confirming after a password login signs nobody in', async () => {
    await setUp(false);
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: false });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const confirmed = await browser.post(mailedLink('ada@example.com'), {});
    expect(confirmed.headers.location).toBe('/accounts/login/');
    expect(await signedInUserId(browser)).toBeNull();
  });

  it('with ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION on, a confirmation in another browser signs nobody in', async () => {
    await setUp(true);
    await signUp();
    const elsewhere = browser.another();
    expect((await elsewhere.post(mailedLink('grace@example.com'), {})).headers.location).toBe('/accounts/login/');
    expect(await signedInUserId(elsewhere)).toBeNull();
    expect(await signedInUserId(browser)).toBeNull();
  });
});
