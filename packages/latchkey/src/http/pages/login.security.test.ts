/**
 * Attacks on the login: account enumeration, brute force, session fixation, replay after logout and
 * expiry, CSRF, open redirect and hostile input, on every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

/** A response as a person comparing two attempts would see it, minus the CSRF token and the echoed login. */
function comparable(response: { statusCode: number; body: string; headers: Record<string, unknown> }, login: string) {
  const { date: _date, 'set-cookie': _cookies, 'content-length': _length, ...headers } = response.headers;
  const body = response.body.replace(/value="[A-Za-z0-9]{64}"/g, 'value="<csrf>"').replace(`value="${login}"`, 'value="<login>"');
  return { status: response.statusCode, headers, body };
}

describe.each(testDatabaseKinds())('login under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
    latchkey = await createTestLatchkey({ kind, ...settings });
    browser = await PageClient.create(latchkey);
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  it('unknown user, wrong password, unverified, inactive and social-only accounts get the same answer, each for one hash', async () => {
    await setUp({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_RATE_LIMITS: false } });
    await createUser(latchkey.deps, { username: 'unverified', email: 'u@example.com', password: PASSWORD, emailVerified: false });
    const inactive = await createUser(latchkey.deps, { username: 'inactive', email: 'i@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.deps.store.users.update(inactive.id, { isActive: false });
    await createUser(latchkey.deps, { username: 'social', email: 's@example.com', password: null, emailVerified: true });
    const attempts = [];
    for (const login of ['nobody', 'ada', 'unverified', 'inactive', 'social']) {
      const visitor = browser.another();
      await visitor.get('/accounts/login/');
      const before = latchkey.deps.passwords.stats().completed;
      attempts.push(comparable(await visitor.post('/accounts/login/', { login, password: 'wrong password' }), login));
      expect(latchkey.deps.passwords.stats().completed - before, login).toBe(1);
    }
    for (const answer of attempts) expect(answer).toEqual(attempts[0]);
    expect(attempts[0]!.status).toBe(400);
  });

  it('past the per-account limit, even the right password is refused with 429; signup and reset still answer', async () => {
    await setUp();
    for (let i = 0; i < 5; i++) expect((await browser.post('/accounts/login/', { login: 'ada', password: `wrong ${i}` })).statusCode).toBe(400);
    const locked = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(locked.statusCode).toBe(429);
    expect(locked.body).toContain('Too many failed login attempts');
    // The per-account window is 5 minutes: the browser is told when to try again.
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(300);
    expect((await browser.get('/accounts/password/reset/')).statusCode).not.toBe(429);
    latchkey.clock.advance(5 * 60 * 1000 + 1000);
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).statusCode).toBe(302);
  });

  it('names the longest wait when both the per-IP and the per-account limits refuse', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { login: '3/m/ip', login_failed: '3/h/key' } } });
    // Windows are aligned to the clock: start at the top of a minute that is not near the hour's end.
    const minute = 60_000;
    const intoHour = latchkey.clock.now().getTime() % (60 * minute);
    latchkey.clock.advance(60 * minute - intoHour + 10 * minute);
    for (let i = 0; i < 3; i++) expect((await browser.post('/accounts/login/', { login: 'ada', password: `wrong ${i}` })).statusCode).toBe(400);
    // Two seconds before the IP's minute ends, the account still has fifty minutes to wait.
    latchkey.clock.advance(58_000);
    const refused = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBe(50 * 60 - 58);
  });

  it('case, whitespace and NFKC variants of one login count against one account', async () => {
    await setUp();
    for (const login of ['ada', 'ADA', ' ada ', 'ａｄａ', 'Ada']) await browser.post('/accounts/login/', { login, password: 'wrong' });
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).statusCode).toBe(429);
  });

  it('a new X-Forwarded-For on every request does not escape the per-IP limit (no trusted proxy)', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { login_failed: '3/m/ip' } } });
    for (let i = 0; i < 3; i++) {
      await browser.post('/accounts/login/', { login: `user${i}`, password: 'wrong' }, { headers: { 'x-forwarded-for': `198.51.100.${i}` } });
    }
    const refused = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD }, { headers: { 'x-forwarded-for': '198.51.100.99' } });
    expect(refused.statusCode).toBe(429);
  });

  it("logging into one's own account does not reset the IP's failure count", async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: { login_failed: '4/m/ip' } } });
    await createUser(latchkey.deps, { username: 'attacker', email: 'x@example.com', password: PASSWORD, emailVerified: true });
    for (let i = 0; i < 3; i++) await browser.post('/accounts/login/', { login: 'ada', password: `wrong ${i}` });
    expect((await browser.another().post('/accounts/login/', { login: 'attacker', password: PASSWORD })).statusCode).toBe(302);
    await browser.post('/accounts/login/', { login: 'ada', password: 'wrong 4' });
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).statusCode).toBe(429);
  });

  it('50 parallel wrong passwords: exactly the limit are checked, the rest refused', async () => {
    await setUp();
    const before = latchkey.deps.passwords.stats().completed;
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => browser.post('/accounts/login/', { login: 'ada', password: `wrong ${i}` })));
    expect(responses.filter((r) => r.statusCode === 400)).toHaveLength(5);
    expect(responses.filter((r) => r.statusCode === 429)).toHaveLength(45);
    expect(latchkey.deps.passwords.stats().completed - before).toBe(5);
  });

  it('a session planted before login is replaced, and the CSRF secret rotates', async () => {
    await setUp();
    await browser.get('/accounts/login/');
    const planted = (await latchkey.deps.sessions.create({ userId: null })).id;
    browser.cookies.set('sessionid', planted);
    const csrfBefore = browser.cookies.get('csrftoken');
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(browser.cookies.get('sessionid')).not.toBe(planted);
    expect(browser.cookies.get('csrftoken')).not.toBe(csrfBefore);
    expect(await latchkey.deps.sessions.load(planted)).toBeUndefined();
  });

  it('the cookie replayed after logout finds no session', async () => {
    await setUp();
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const cookie = browser.cookies.get('sessionid')!;
    await browser.post('/accounts/logout/', {});
    const replay = browser.another();
    replay.cookies.set('sessionid', cookie);
    expect((await replay.get('/accounts/logout/')).headers.location).toBe('/');
    expect(await latchkey.currentUser({ headers: { cookie: `sessionid=${cookie}` } } as never)).toBeUndefined();
  });

  it('past the idle limit the session is gone; cookies carry HttpOnly and SameSite; pages are no-store', async () => {
    await setUp();
    const response = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(response.cookies.find((c) => c.name === 'sessionid')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    latchkey.clock.advance(latchkey.settings.SESSION_IDLE_TIMEOUT * 1000 + 1000);
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toBeUndefined();
    expect((await browser.get('/accounts/login/')).headers['cache-control']).toBe('no-store');
  });

  it("login and logout refuse a missing token, another session's token, a foreign Origin and cross-site fetches", async () => {
    await setUp();
    const other = browser.another();
    await other.get('/accounts/login/');
    await browser.get('/accounts/login/');
    const foreignToken = other.cookies.get('csrftoken')!;
    const cases = [
      browser.post('/accounts/login/', { login: 'ada', password: PASSWORD }, { csrf: false }),
      browser.post('/accounts/login/', { login: 'ada', password: PASSWORD, csrfmiddlewaretoken: foreignToken }, { csrf: false }),
      browser.post('/accounts/login/', { login: 'ada', password: PASSWORD }, { headers: { origin: 'https://evil.example' } }),
      browser.post('/accounts/login/', { login: 'ada', password: PASSWORD }, { headers: { 'sec-fetch-site': 'cross-site' } }),
      browser.post('/accounts/logout/', {}, { csrf: false }),
    ];
    for (const response of await Promise.all(cases)) expect(response.statusCode).toBe(403);
    expect(browser.cookies.get('sessionid')).toBeUndefined();
  });

  it('next is ignored for every open-redirect form, by GET and POST', async () => {
    await setUp();
    const attacks = ['//evil.com', '///evil.com', '/\\evil.com', 'https://evil.com', 'javascript:alert(1)', 'https://app@evil.com', '%2F%2Fevil.com', '/\t/evil.com'];
    for (const next of attacks) {
      const visitor = browser.another();
      const page = await visitor.get(`/accounts/login/?next=${encodeURIComponent(next)}`);
      expect(page.body).not.toContain('evil.com');
      const response = await visitor.post('/accounts/login/', { login: 'ada', password: PASSWORD, next });
      expect(response.headers.location, next).toBe('/');
    }
    const legit = await browser.another().post('/accounts/login/', { login: 'ada', password: PASSWORD, next: '/accounts/email/?tab=1' });
    expect(legit.headers.location).toBe('/accounts/email/?tab=1');
  });

  it('SQL payloads, a 1 MB password, NUL bytes, arrays and objects fail normally without a 500 or a hash', async () => {
    await setUp();
    const before = latchkey.deps.passwords.stats().completed;
    const huge = await browser.post('/accounts/login/', { login: 'ada', password: 'x'.repeat(1024 * 1024) });
    expect([400, 413]).toContain(huge.statusCode);
    expect(latchkey.deps.passwords.stats().completed).toBe(before);
    for (const login of ["' OR 1=1 --", "ada'; SELECT pg_sleep(5); --", 'ada\u0000', '"; DROP TABLE latchkey_users; --']) {
      expect((await browser.post('/accounts/login/', { login, password: 'x' })).statusCode, login).toBe(400);
    }
    const json = await browser.app.inject({
      method: 'POST',
      url: '/accounts/login/',
      headers: { host: 'testserver', 'content-type': 'application/json', 'x-csrftoken': browser.cookies.get('csrftoken') ?? '' },
      cookies: Object.fromEntries(browser.cookies),
      payload: '{"login":["ada"],"password":{"$ne":""}}',
    });
    expect(json.statusCode).toBe(400);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });
});
