/**
 * Attacks on email verification by code: the code is single use, limited in tries (parallel ones
 * included) and time, bound to the browser it was mailed for (not to a session planted before the
 * password, not to whoever signs in next on that browser), gone at logout; its form needs the CSRF
 * token; and a signup with an address that already has an account cannot be told from a new one,
 * code form and wrong answers included. On every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const CONFIRM_PAGE = '/accounts/confirm-email/';

/** A response as a person comparing two attempts would see it: the CSRF token and the typed address left out. */
function comparable(response: { statusCode: number; body: string; headers: Record<string, unknown> }, email: string) {
  const { date: _date, 'set-cookie': _cookies, 'content-length': _length, ...headers } = response.headers;
  return { status: response.statusCode, headers, body: response.body.replace(/value="[A-Za-z0-9]{64}"/g, 'value="<csrf>"').replaceAll(email, '<email>').replaceAll(email.split('@')[0]!, '<name>') };
}

describe.each(testDatabaseKinds())('email verification by code under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true, ...settings } });
    browser = await PageClient.create(latchkey);
  }

  function mailedCode(address = 'grace@example.com'): string {
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(address)?.text ?? '')?.[1];
    if (code === undefined) throw new Error(`no code was mailed to ${address}`);
    return code;
  }

  const signedInUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const isVerified = async (email: string) => (await latchkey.deps.store.emailAddresses.listByEmail(email)).some((address) => address.verified);
  const signUp = (as = browser, email = 'grace@example.com') =>
    as.post('/accounts/signup/', { username: email.split('@')[0]!, email, password1: PASSWORD, password2: PASSWORD });

  it('a signup with a taken address reads as a new one: the redirect, the code form, wrong codes, and their end', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 2 });
    await createUser(latchkey.deps, { username: 'owner', email: 'taken@example.com', password: PASSWORD, emailVerified: true });
    const journey = async (as: PageClient, email: string) => {
      const steps = [comparable(await signUp(as, email), email), comparable(await as.get(CONFIRM_PAGE), email)];
      for (let attempt = 0; attempt < 3; attempt += 1) steps.push(comparable(await as.post(CONFIRM_PAGE, { code: 'AAAAAA' === mailedCode() ? 'BBBBBB' : 'AAAAAA' }), email));
      steps.push(comparable(await as.get('/accounts/login/'), email));
      return steps;
    };
    const fresh = await journey(browser, 'grace@example.com');
    const taken = await journey(browser.another(), 'taken@example.com');
    expect(taken).toEqual(fresh);
    expect(fresh.map((step) => step.status)).toEqual([302, 200, 400, 400, 302, 200]);
  });

  it('a code works once: replayed with the stopped login\'s old cookie after the sign-in, it does nothing', async () => {
    await setUp();
    await signUp();
    const stopped = browser.cookies.get('sessionid')!;
    const code = mailedCode();
    expect((await browser.post(CONFIRM_PAGE, { code })).headers.location).toBe('/');
    const replay = browser.another();
    replay.cookies.set('sessionid', stopped);
    await replay.post(CONFIRM_PAGE, { code });
    expect(await signedInUser(replay)).toBeNull();
  });

  it('parallel guesses from one browser get no more than MAX_ATTEMPTS tries, and the right code fails after them', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: 2 });
    await signUp();
    const code = mailedCode();
    const wrong = code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA';
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => browser.post(CONFIRM_PAGE, { code: wrong })));
    expect(answers.filter((answer) => answer.statusCode === 400).length).toBeLessThanOrEqual(2);
    await browser.post(CONFIRM_PAGE, { code });
    expect(await signedInUser()).toBeNull();
    expect(await isVerified('grace@example.com')).toBe(false);
  });

  it('a session planted before the password cannot take the code: the waiting login lives under a new id', async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: false });
    await browser.get('/accounts/login/');
    const planted = (await latchkey.deps.sessions.create({ userId: null })).id;
    browser.cookies.set('sessionid', planted);
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe(CONFIRM_PAGE);
    expect(browser.cookies.get('sessionid')).not.toBe(planted);
    const attacker = browser.another();
    attacker.cookies.set('sessionid', planted);
    await attacker.post(CONFIRM_PAGE, { code: mailedCode('ada@example.com') });
    expect(await signedInUser(attacker)).toBeNull();
    expect(await isVerified('ada@example.com')).toBe(false);
  });

  it('logging out drops the waiting login and its code', async () => {
    await setUp();
    await signUp();
    await browser.post('/accounts/logout/', {});
    await browser.post(CONFIRM_PAGE, { code: mailedCode() });
    expect(await signedInUser()).toBeNull();
    expect(await isVerified('grace@example.com')).toBe(false);
  });

  it("an added address's code is its adder's: whoever signs in next on the browser cannot use it", async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    await browser.post('/accounts/email/', { email: 'second@example.com', action_add: '' });
    const code = mailedCode('second@example.com');
    await browser.post('/accounts/logout/', {});
    await browser.post('/accounts/login/', { login: 'bob', password: PASSWORD });
    await browser.post(CONFIRM_PAGE, { code });
    expect(await isVerified('second@example.com')).toBe(false);
  });

  it('the code form refuses a post without the CSRF token (403), and the code still works with it', async () => {
    await setUp();
    await signUp();
    const code = mailedCode();
    expect((await browser.post(CONFIRM_PAGE, { code }, { csrf: false })).statusCode).toBe(403);
    expect((await browser.post(CONFIRM_PAGE, { action_resend: '1' }, { csrf: false })).statusCode).toBe(403);
    expect(await isVerified('grace@example.com')).toBe(false);
    expect((await browser.post(CONFIRM_PAGE, { code })).headers.location).toBe('/');
  });
});
