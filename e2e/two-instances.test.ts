/**
 * Two instances of the example site, as docs/production.md deploys them: real processes in
 * production mode on one PostgreSQL database and one Redis, with one secret key, behind a
 * round-robin proxy (harness/cluster.ts). Concurrent journeys check that whatever one instance
 * decides, the other knows at once: a session, a CSRF token, rate-limit counts, a used TOTP code,
 * a deleted API token, a used password reset key, a used confirmation key. Nothing may be held in
 * one process's memory. Each journey pins its steps to an instance (harness/visitor.ts), and comes
 * from a loopback address of its own, so the per-IP limits of one journey never touch another's.
 *
 * Production settings throughout, but for two. Passwords are hashed with argon2id at cheap
 * parameters, as in the other journeys (FAST_HASHING_ENV): these journeys are about what the
 * instances share, and some forty hashes at Django's cost would take most of the minute this file
 * may take on a 2-core machine (the soak benchmark runs with Django's). And a TOTP code is accepted
 * one step either side (MFA_TOTP_TOLERANCE 1), so that a login after the activation need not wait
 * up to 30 s for the next step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPostgresUrl } from '../packages/latchkey/src/testing/database.js';
import { appCode, PERIOD_MS } from './authenticator-app.js';
import { keyOf, mailedLink, startCluster, type RunningCluster } from './harness/cluster.js';
import { createSitePostgresDatabase } from './harness/postgres.js';
import { Visitor, type Reply } from './harness/visitor.js';
import { FAST_HASHING_ENV, NEW_PASSWORD, newAccount, type Account } from './journey.js';

const A = 0;
const B = 1;
/** Production's session cookie (SESSION_COOKIE_NAME), a __Host- cookie. */
const SESSION_COOKIE = '__Host-sessionid';
const JOURNEY_TIMEOUT_MS = 60_000;

/** Both services are needed; vitest.global-setup.ts says in one line when either is missing. */
const servicesAvailable = testPostgresUrl() !== undefined && Boolean(process.env.REDIS_URL);

/** The flow a headless 401 says the login waits at. */
function pendingFlow(reply: Reply): string | undefined {
  const flows = (reply.json().data?.flows ?? []) as { id: string; is_pending?: boolean }[];
  return flows.find((flow) => flow.is_pending === true)?.id;
}

/** The fields a DRF 400 names. */
const fieldsOf = (reply: Reply): string[] => Object.keys(reply.json() as object);

/** The statuses of several answers, sorted, for races whose winner is not known in advance. */
const statuses = (replies: Reply[]): number[] => replies.map((reply) => reply.status).sort((a, b) => a - b);

describe.runIf(servicesAvailable).concurrent('two instances behind a round-robin proxy, on PostgreSQL and Redis', () => {
  let cluster: RunningCluster;

  beforeAll(async () => {
    cluster = await startCluster({ database: await createSitePostgresDatabase(), redisUrl: process.env.REDIS_URL!, env: { ...FAST_HASHING_ENV, LATCHKEY_MFA_TOTP_TOLERANCE: '1' } });
  }, 90_000);
  afterAll(() => cluster?.stop(), 30_000);

  const visitor = (): Visitor => new Visitor(cluster.url);

  /** Signs up and confirms the address (mandatory in production), its steps spread over both instances by the proxy. */
  async function confirmedAccount(prefix: string): Promise<Account> {
    const account = newAccount(prefix);
    const person = visitor();
    const signup = await person.headless('POST', '/auth/signup', { json: { email: account.email, username: account.username, password: account.password } });
    expect(pendingFlow(signup), signup.body).toBe('verify_email');
    const key = keyOf(await mailedLink(cluster.smtp, account.email, '/accounts/confirm-email/'));
    const confirmed = await person.headless('POST', '/auth/email/verify', { json: { key } });
    expect(confirmed.status, confirmed.body).toBe(401);
    return account;
  }

  async function signedIn(account: Account, on: number): Promise<Visitor> {
    const person = visitor();
    const login = await person.headless('POST', '/auth/login', { on, json: { username: account.username, password: account.password } });
    expect(login.status, login.body).toBe(200);
    return person;
  }

  it('signs in through the form of one instance with the CSRF token of the other, uses the session on both, and a sign-out on one ends it on both', async () => {
    const ada = await confirmedAccount('ada');
    const laptop = visitor();
    const form = await laptop.send('GET', '/accounts/login/', { on: A });
    const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(form.body)?.[1];
    expect(token).toBeDefined();
    const login = await laptop.send('POST', '/accounts/login/', { on: B, form: { csrfmiddlewaretoken: token!, login: ada.username, password: ada.password } });
    expect(login.status, login.body).toBe(302);
    expect(login.headers.location).toBe('/users/~redirect/');
    const landing = await laptop.send('GET', '/users/~redirect/', { on: A });
    expect(landing.headers.location).toBe(`/users/${ada.username}/`);
    const page = await laptop.send('GET', `/users/${ada.username}/`, { on: B });
    expect(page.status).toBe(200);
    expect(page.body).toContain(ada.username);

    const me = await laptop.send('GET', '/api/users/me/', { on: A });
    expect(me.status).toBe(200);
    expect(me.json()).toMatchObject({ username: ada.username });
    const session = await laptop.headless('GET', '/auth/session', { on: B });
    expect(session.json().data.user.username).toBe(ada.username);

    // A copy of the cookie works too, until the session ends.
    const copy = visitor();
    copy.setCookie(SESSION_COOKIE, laptop.cookie(SESSION_COOKIE)!);
    expect((await copy.send('GET', '/api/users/me/', { on: B })).status).toBe(200);

    const signOut = await laptop.headless('DELETE', '/auth/session', { on: A });
    expect(signOut.status).toBe(401);
    const refused = await copy.send('GET', '/api/users/me/', { on: B });
    expect(refused.status).toBe(401);
    expect(refused.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
    expect((await copy.headless('GET', '/auth/session', { on: A })).status).toBe(401);
  }, JOURNEY_TIMEOUT_MS);

  it('counts wrong passwords from one address on both instances: of eleven sent at once, exactly one is refused for the limit', async () => {
    const attacker = visitor();
    // The CSRF cookie first, so that the logins sent at once share it.
    await attacker.headless('GET', '/auth/session', { on: A });
    // Attempts less than half a window apart are always counted in one window, wherever the
    // windows fall. Unknown accounts, each named once, so that only the per-IP limit
    // (login_failed 10/m/ip) applies: the site answers and counts them exactly as wrong passwords.
    // Half go to the headless API of one instance, half to the token API of the other: one count
    // for every door.
    const attempts = Array.from({ length: 11 }, (_, index) => {
      const username = `nobody-${index}-${attacker.address}`;
      return index % 2 === 0
        ? attacker.headless('POST', '/auth/login', { on: A, json: { username, password: 'not-the-password' } })
        : attacker.send('POST', '/api/auth-token/', { on: B, json: { username, password: 'not-the-password' } });
    });
    const answers = await Promise.all(attempts);
    expect(statuses(answers)).toEqual([...Array<number>(10).fill(400), 429]);

    // The limit holds on both instances now, and says when to come back.
    for (const on of [A, B]) {
      const more = await attacker.send('POST', '/api/auth-token/', { on, json: { username: `nobody-more-${attacker.address}`, password: 'x' } });
      expect(more.status).toBe(429);
      expect(Number(more.headers['retry-after'])).toBeGreaterThan(0);
    }
    // Someone at another address is not held back by it.
    const neighbour = await visitor().send('POST', '/api/auth-token/', { on: A, json: { username: `nobody-else-${attacker.address}`, password: 'x' } });
    expect(neighbour.status).toBe(400);
  }, JOURNEY_TIMEOUT_MS);

  it('holds back an address after five wrong passwords for one account spread over both instances, the right password too, but not the owner elsewhere', async () => {
    const bob = await confirmedAccount('bob');
    // login_failed 5/5m/ip+key: counted per account and address, on both instances together.
    const stranger = visitor();
    const wrong = await Promise.all(
      Array.from({ length: 5 }, (_, index) => stranger.send('POST', '/api/auth-token/', { on: index % 2, json: { username: bob.username, password: `wrong-${index}` } })),
    );
    expect(statuses(wrong)).toEqual([400, 400, 400, 400, 400]);
    expect((await stranger.send('POST', '/api/auth-token/', { on: A, json: { username: bob.username, password: 'wrong-again' } })).status).toBe(429);
    for (const on of [A, B]) {
      const right = await stranger.headless('POST', '/auth/login', { on, json: { username: bob.username, password: bob.password } });
      expect(right.status, right.body).toBe(429);
    }
    // Bob, at his own address, signs in on either instance.
    for (const on of [A, B]) {
      const own = await visitor().send('POST', '/api/auth-token/', { on, json: { username: bob.username, password: bob.password } });
      expect(own.status, own.body).toBe(200);
    }
  }, JOURNEY_TIMEOUT_MS);

  it('refuses on one instance a TOTP code used on the other, and lets only one of two logins racing with one code through', async () => {
    const cleo = await confirmedAccount('cleo');
    const person = await signedIn(cleo, A);
    // The secret is shown by one instance and kept in the session; the other activates the app.
    const setup = await person.headless('GET', '/account/authenticators/totp', { on: B });
    expect(setup.status).toBe(404);
    const secret = setup.json().meta.secret as string;
    const activatedAt = Date.now();
    const activationCode = appCode(secret, activatedAt);
    const activated = await person.headless('POST', '/account/authenticators/totp', { on: A, json: { code: activationCode } });
    expect(activated.status, activated.body).toBe(200);

    // The next step's code, sent to both instances at once: one login gets a token, the other is refused.
    const nextCode = appCode(secret, activatedAt + PERIOD_MS);
    const credentials = { username: cleo.username, password: cleo.password, code: nextCode };
    const race = await Promise.all([A, B].map((on) => visitor().send('POST', '/api/auth-token/', { on, json: credentials })));
    expect(statuses(race)).toEqual([200, 400]);
    expect(race.find((reply) => reply.status === 200)!.json().token).toMatch(/^\S{20,}$/);
    expect(fieldsOf(race.find((reply) => reply.status === 400)!)).toEqual(['code']);

    // The code that activated the app on A does not sign in on B.
    const replayed = await visitor().send('POST', '/api/auth-token/', { on: B, json: { ...credentials, code: activationCode } });
    expect(replayed.status).toBe(400);
    expect(fieldsOf(replayed)).toEqual(['code']);
    // Nor does the raced code finish a login that began with the password on B and goes on at A.
    const browser = visitor();
    const password = await browser.headless('POST', '/auth/login', { on: B, json: { username: cleo.username, password: cleo.password } });
    expect(password.status).toBe(401);
    expect(pendingFlow(password)).toBe('mfa_authenticate');
    const second = await browser.headless('POST', '/auth/2fa/authenticate', { on: A, json: { code: nextCode } });
    expect(second.status).toBe(400);
    expect(second.json().errors[0]).toMatchObject({ param: 'code' });
    // Every code above was still inside its accepted steps: refused for being used, not for being late.
    expect(Date.now() - activatedAt, 'the journey took longer than a TOTP step').toBeLessThan(PERIOD_MS);
  }, JOURNEY_TIMEOUT_MS);

  it('refuses on one instance an API token deleted on the other, at once', async () => {
    const dora = await confirmedAccount('dora');
    const app = visitor();
    const obtained = await app.send('POST', '/api/auth-token/', { on: A, form: { username: dora.username, password: dora.password } });
    expect(obtained.status).toBe(200);
    const key = obtained.json().token as string;
    const authorization = { authorization: `Token ${key}` };
    const me = await app.send('GET', '/api/users/me/', { on: B, headers: authorization });
    expect(me.status).toBe(200);
    expect(me.json()).toMatchObject({ username: dora.username });

    expect((await app.send('DELETE', '/api/auth-token/', { on: B, headers: authorization })).status).toBe(204);
    for (const on of [A, B]) {
      const refused = await app.send('GET', '/api/users/me/', { on, headers: authorization });
      expect(refused.status).toBe(401);
      expect(refused.json()).toEqual({ detail: 'Invalid token.' });
      expect(refused.headers['www-authenticate']).toBe('Token');
    }
  }, JOURNEY_TIMEOUT_MS);

  it('lets a password reset key work once across both instances, even when both get it at once, and ends the sessions on both', async () => {
    const emil = await confirmedAccount('emil');
    const laptop = await signedIn(emil, A);
    const person = visitor();
    expect((await person.headless('POST', '/auth/password/request', { on: B, json: { email: emil.email } })).status).toBe(200);
    const link = await mailedLink(cluster.smtp, emil.email, '/accounts/password/reset/key/');
    expect(link.origin).toBe(cluster.url);
    const key = keyOf(link);
    for (const on of [A, B]) {
      expect((await person.headless('GET', '/auth/password/reset', { on, headers: { 'x-password-reset-key': key } })).status).toBe(200);
    }

    const race = await Promise.all([A, B].map((on) => visitor().headless('POST', '/auth/password/reset', { on, json: { key, password: NEW_PASSWORD } })));
    // 401: the password is reset and nobody is signed in; 400: the key is no longer valid.
    expect(statuses(race)).toEqual([400, 401]);
    for (const on of [A, B]) {
      const again = await person.headless('POST', '/auth/password/reset', { on, json: { key, password: `${NEW_PASSWORD}-2` } });
      expect(again.status).toBe(400);
      expect(again.json().errors[0]).toMatchObject({ code: 'token_invalid', param: 'key' });
    }

    expect((await laptop.headless('GET', '/auth/session', { on: B })).status).toBe(401);
    expect((await visitor().send('POST', '/api/auth-token/', { on: A, json: { username: emil.username, password: emil.password } })).status).toBe(400);
    expect((await visitor().send('POST', '/api/auth-token/', { on: B, json: { username: emil.username, password: NEW_PASSWORD } })).status).toBe(200);
  }, JOURNEY_TIMEOUT_MS);

  it('lets an email confirmation key work once across both instances, even when both get it at once', async () => {
    const fay = newAccount('fay');
    const person = visitor();
    const signup = await person.headless('POST', '/auth/signup', { on: A, json: { email: fay.email, username: fay.username, password: fay.password } });
    expect(pendingFlow(signup), signup.body).toBe('verify_email');
    // Not confirmed yet: mandatory verification stops the login.
    const early = await visitor().headless('POST', '/auth/login', { on: B, json: { username: fay.username, password: fay.password } });
    expect(pendingFlow(early)).toBe('verify_email');

    const key = keyOf(await mailedLink(cluster.smtp, fay.email, '/accounts/confirm-email/'));
    expect((await visitor().headless('GET', '/auth/email/verify', { on: B, headers: { 'x-email-verification-key': key } })).status).toBe(200);
    const race = await Promise.all([person.headless('POST', '/auth/email/verify', { on: A, json: { key } }), visitor().headless('POST', '/auth/email/verify', { on: B, json: { key } })]);
    // 401: confirmed (the person signs in themselves afterwards); 400: the key is spent.
    expect(statuses(race)).toEqual([400, 401]);
    for (const on of [A, B]) {
      const again = await visitor().headless('POST', '/auth/email/verify', { on, json: { key } });
      expect(again.status).toBe(400);
      expect(again.json().errors[0]).toMatchObject({ code: 'invalid', param: 'key' });
    }
    expect((await visitor().headless('POST', '/auth/login', { on: B, json: { username: fay.username, password: fay.password } })).status).toBe(200);
  }, JOURNEY_TIMEOUT_MS);
});
