/**
 * Issue 20's rule, proven across processes: a deleted API token, an ended session, a deactivated
 * user, a changed password that ends sessions are refused at the very next request, on every
 * instance, whichever process made the change. No time window, no retry, no sleep.
 *
 * Each rule runs on two deployments, each of two real server processes of the example site in
 * production mode (harness/cluster.ts): on one SQLite file (without Redis: what several processes
 * of one machine share), and on one PostgreSQL database (with Redis when REDIS_URL is set) when
 * TEST_DATABASE_URL names a server (siteDatabases(); CI sets both, so nothing is skipped there). Every
 * request goes straight to the instance it names, not through the proxy, so the test knows which
 * process answered. The changes are made where a person makes them: the management command
 * `delete-token` in a third process (`npm run manage`), a sign-out and a password change in the
 * headless API of instance A, a deactivation in the admin on instance A; the refusals are checked
 * on B first, then on A.
 *
 * Why the warm-up: a process that cached token or session lookups (a per-process cache
 * invalidated by SQLite's PRAGMA data_version, say) would hold exactly the credentials used just
 * before. So each credential is used successfully several times on BOTH instances before it is
 * revoked, and goes on being used on both while the change is being made (a management command
 * takes seconds to start: a cache that kept entries for a few seconds would otherwise have let
 * them go by then); meanwhile every answer is the user or the refusal, and once an instance has
 * refused it, it never accepts it again. Then the first request on each instance after the change
 * has returned must be refused. Only behaviour is checked (status codes, the body's user), never
 * how the site looks a credential up, so the proof holds whatever cache is added.
 *
 * Each case has its own user (and case 3 its own superuser), so the cases run concurrently and in
 * any order; both deployments start at once. Passwords are hashed at cheap parameters
 * (FAST_HASHING_ENV), as in the other journeys: hashing is not what is tested here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterSqliteFile, keyOf, mailedLink, startCluster, type RunningCluster } from './harness/cluster.js';
import { DirectVisitor, type DirectReply, type Instance } from './harness/direct-visitor.js';
import { createSitePostgresDatabase, siteDatabases, type SiteDatabase } from './harness/postgres.js';
import { FAST_HASHING_ENV, NEW_PASSWORD, PASSWORD, newAccount, uniqueName, type Account } from './journey.js';

/** Production's session cookie (SESSION_COOKIE_NAME), a __Host- cookie. */
const SESSION_COOKIE = '__Host-sessionid';
/** The admin's address in the cluster (its LATCHKEY_ADMIN_URL). */
const ADMIN = '/staff/';
/** Successful requests with a credential on each instance before it is revoked. */
const WARM_REQUESTS = 3;
/** The pause between two requests with a credential on one instance while it is being revoked: it keeps the instances' caches warm without starving the change of CPU. */
const IN_USE_PAUSE_MS = 100;
/** A case's own time, management commands included: generous, for a loaded machine. */
const CASE_TIMEOUT_MS = 90_000;
/** Four server processes start at once (two per deployment), maybe beside another file's: generous, as it costs a passing run nothing. */
const INSTANCE_START_TIMEOUT_MS = 80_000;
const START_TIMEOUT_MS = 120_000;

/** What the users API answers a request whose credential it refuses (Django REST framework's messages). */
const TOKEN_REFUSED = { detail: 'Invalid token.' };
const SESSION_REFUSED = { detail: 'Authentication credentials were not provided.' };

/** A credential as a client holds it: one request with it asks the users API who the requester is. */
interface Credential {
  /** GET /api/users/me/ on `instance`, carrying the credential and nothing else. */
  me(instance: Instance): Promise<DirectReply>;
  /** The body of the 401 once it is revoked. */
  refused: { detail: string };
}

/** An API token key, sent as `Authorization: Token <key>` by an app of its own. */
function tokenCredential(key: string): Credential {
  const app = new DirectVisitor();
  return { me: (instance) => app.send(instance, 'GET', '/api/users/me/', { headers: { authorization: `Token ${key}` } }), refused: TOKEN_REFUSED };
}

/**
 * A session cookie's value, sent as it was copied, whatever any answer says: a copy that the
 * site's "forget this cookie" would not erase, so that a 401 after the revocation is the site
 * refusing the session and never a request that lacked it.
 */
function sessionCredential(sessionId: string): Credential {
  const copy = new DirectVisitor();
  return { me: (instance) => copy.send(instance, 'GET', '/api/users/me/', { headers: { cookie: `${SESSION_COOKIE}=${sessionId}` } }), refused: SESSION_REFUSED };
}

/** The hidden CSRF field of a page's form. */
function csrfOf(page: DirectReply): string {
  const token = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(page.body)?.[1];
  if (token === undefined) throw new Error(`No CSRF field on the page (${page.status}):\n${page.body.slice(0, 2000)}`);
  return token;
}

/** Each deployment: its title, and how its two instances start. */
const DEPLOYMENTS: Record<SiteDatabase, { title: string; start(): Promise<RunningCluster> }> = {
  sqlite: {
    title: 'two server processes on one SQLite file',
    start: async () => startCluster({ database: await createClusterSqliteFile(), env: FAST_HASHING_ENV, startTimeoutMs: INSTANCE_START_TIMEOUT_MS }),
  },
  postgres: {
    title: `two instances on PostgreSQL${process.env.REDIS_URL ? ' and Redis' : ''}`,
    start: async () => startCluster({ database: await createSitePostgresDatabase(), redisUrl: process.env.REDIS_URL || undefined, env: FAST_HASHING_ENV, startTimeoutMs: INSTANCE_START_TIMEOUT_MS }),
  },
};

describe.concurrent('a revoked credential is refused at its very next request on every instance', () => {
  describe.each(siteDatabases().map((database) => DEPLOYMENTS[database]))('$title', (deployment) => {
    let cluster: RunningCluster;
    let A: Instance;
    let B: Instance;

    beforeAll(async () => {
      cluster = await deployment.start();
      [A, B] = [cluster.instances[0]!, cluster.instances[1]!];
    }, START_TIMEOUT_MS);
    afterAll(() => cluster?.stop(), 30_000);

    /** 'A' or 'B', for a failure to say which instance answered. */
    const nameOf = (instance: Instance): string => (instance === A ? 'A' : 'B');

    /** Signs up on A and confirms the address (mandatory in production) on B. */
    async function confirmedAccount(prefix: string): Promise<Account> {
      const account = newAccount(prefix);
      const person = new DirectVisitor();
      const signup = await person.headless(A, 'POST', '/auth/signup', { json: { email: account.email, username: account.username, password: account.password } });
      expect(signup.status, signup.body).toBe(401);
      const key = keyOf(await mailedLink(cluster.smtp, account.email, '/accounts/confirm-email/'));
      const confirmed = await person.headless(B, 'POST', '/auth/email/verify', { json: { key } });
      expect(confirmed.status, confirmed.body).toBe(401);
      return account;
    }

    /** A browser signed in through the headless API of `instance`; its jar holds the session cookie. */
    async function signedIn(account: Account, instance: Instance): Promise<DirectVisitor> {
      const browser = new DirectVisitor();
      const login = await browser.headless(instance, 'POST', '/auth/login', { json: { username: account.username, password: account.password } });
      expect(login.status, login.body).toBe(200);
      expect(browser.cookie(SESSION_COOKIE)).toBeDefined();
      return browser;
    }

    /** The user's API token, from POST /api/auth-token/ on `instance`. */
    async function apiToken(account: Account, instance: Instance): Promise<string> {
      const obtained = await new DirectVisitor().send(instance, 'POST', '/api/auth-token/', { json: { username: account.username, password: account.password } });
      expect(obtained.status, obtained.body).toBe(200);
      return obtained.json().token as string;
    }

    /** Uses the credential successfully WARM_REQUESTS times on each instance, both at once: whatever an instance could cache, it now holds. */
    async function warmOnBoth(credential: Credential, account: Account): Promise<void> {
      await Promise.all(
        [A, B].map(async (instance) => {
          for (let request = 0; request < WARM_REQUESTS; request++) {
            const reply = await credential.me(instance);
            expect(reply.status, `instance ${nameOf(instance)}, warming up: ${reply.body}`).toBe(200);
            expect(reply.json()).toMatchObject({ username: account.username });
          }
        }),
      );
    }

    /**
     * Uses the credential on `instance` again and again until `inUse()` says the change is done:
     * each answer is the user or the refusal, and once refused, always refused.
     */
    async function keepUsing(credential: Credential, instance: Instance, account: Account, inUse: () => boolean): Promise<void> {
      let refused = false;
      while (inUse()) {
        const reply = await credential.me(instance);
        if (reply.status === 200 && !refused) {
          expect(reply.json()).toMatchObject({ username: account.username });
        } else {
          expect(reply.status, `instance ${nameOf(instance)}, ${refused ? 'after a refusal' : 'while the change was made'}: ${reply.body}`).toBe(401);
          expect(reply.json()).toEqual(credential.refused);
          refused = true;
        }
        await new Promise((resolve) => setTimeout(resolve, IN_USE_PAUSE_MS));
      }
    }

    /**
     * Warms the credentials on both instances (warmOnBoth), makes the change (`revoke`) while still
     * using them on both (keepUsing), and then checks that the first request with each after the
     * change has returned, on B and then on A, is refused: no retry, no wait. Returns what `revoke` returned.
     */
    async function expectRevokedAtOnce<T>(account: Account, credentials: Credential[], revoke: () => Promise<T>): Promise<T> {
      await Promise.all(credentials.map((credential) => warmOnBoth(credential, account)));
      let revoking = true;
      const inUse = Promise.all(credentials.flatMap((credential) => [A, B].map((instance) => keepUsing(credential, instance, account, () => revoking))));
      // A failure while the change is still being made is reported once the change is done.
      inUse.catch(() => undefined);
      const outcome = await revoke().then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      revoking = false;
      if (!outcome.ok) {
        await inUse.catch(() => undefined);
        throw outcome.error;
      }
      await inUse;
      for (const credential of credentials) {
        for (const instance of [B, A]) {
          const reply = await credential.me(instance);
          expect(reply.status, `instance ${nameOf(instance)}, the first request after the change: ${reply.body}`).toBe(401);
          expect(reply.json()).toEqual(credential.refused);
        }
      }
      return outcome.value;
    }

    it('refuses on both instances an API token the management command delete-token deleted, in a third process', async () => {
      const ada = await confirmedAccount('ada');
      const token = tokenCredential(await apiToken(ada, A));
      await expectRevokedAtOnce(ada, [token], async () => {
        const deleted = await cluster.manage(['delete-token', ada.username]);
        expect(deleted.stdout).toBe('Token deleted.\n');
      });
    }, CASE_TIMEOUT_MS);

    it('refuses on B, and on A, a session signed out on A', async () => {
      const bob = await confirmedAccount('bob');
      const laptop = await signedIn(bob, A);
      const session = sessionCredential(laptop.cookie(SESSION_COOKIE)!);
      await expectRevokedAtOnce(bob, [session], async () => {
        const signOut = await laptop.headless(A, 'DELETE', '/auth/session');
        expect(signOut.status, signOut.body).toBe(401);
      });
      expect(laptop.cookie(SESSION_COOKIE)).toBeUndefined();
    }, CASE_TIMEOUT_MS);

    it("refuses on B, and on A, the token and the session of a user deactivated in the admin on A", async () => {
      const keeper = uniqueName('keeper');
      const [cleo] = await Promise.all([
        confirmedAccount('cleo'),
        cluster.manage(['createsuperuser', '--username', keeper, '--email', `${keeper}@example.com`, '--noinput'], { LATCHKEY_SUPERUSER_PASSWORD: PASSWORD }),
      ]);
      const token = tokenCredential(await apiToken(cleo, B));
      const session = sessionCredential((await signedIn(cleo, B)).cookie(SESSION_COOKIE)!);

      // The superuser signs in to the admin on A, finds Cleo in the users list and deactivates her with the bulk action, after its confirmation page.
      const admin = new DirectVisitor();
      const loginForm = await admin.send(A, 'GET', `${ADMIN}login/`);
      const login = await admin.send(A, 'POST', `${ADMIN}login/`, { form: { csrfmiddlewaretoken: csrfOf(loginForm), username: keeper, password: PASSWORD, next: ADMIN } });
      expect(login.status, login.body).toBe(302);
      expect(login.headers.location).toBe(ADMIN);
      const usersList = `${ADMIN}users/user/`;
      const found = await admin.send(A, 'GET', `${usersList}?q=${cleo.username}`);
      expect(found.status).toBe(200);
      const id = new RegExp(`name="_selected_action" value="(\\d+)" aria-label="Select ${cleo.username}"`).exec(found.body)?.[1];
      expect(id, found.body).toBeDefined();
      const selection = { action: 'deactivate', _selected_action: id! };
      const confirmation = await admin.send(A, 'POST', usersList, { form: { csrfmiddlewaretoken: csrfOf(found), ...selection } });
      expect(confirmation.status, confirmation.body).toBe(200);
      expect(confirmation.body).toContain('Are you sure?');
      const backToList = await expectRevokedAtOnce(cleo, [token, session], async () => {
        const deactivated = await admin.send(A, 'POST', usersList, { form: { csrfmiddlewaretoken: csrfOf(confirmation), ...selection, post: 'yes' } });
        expect(deactivated.status, deactivated.body).toBe(302);
        return deactivated.headers.location!;
      });
      const listAfter = await admin.send(A, 'GET', backToList);
      expect(listAfter.body).toContain(`Deactivated 1 user: ${cleo.username}.`);
    }, CASE_TIMEOUT_MS);

    it("refuses on B, and on A, the phone's session once the password is changed from the laptop on A; the laptop stays signed in", async () => {
      const dora = await confirmedAccount('dora');
      const laptop = await signedIn(dora, A);
      const phone = sessionCredential((await signedIn(dora, B)).cookie(SESSION_COOKIE)!);
      await expectRevokedAtOnce(dora, [phone], async () => {
        const change = await laptop.headless(A, 'POST', '/account/password/change', { json: { current_password: dora.password, new_password: NEW_PASSWORD } });
        expect(change.status, change.body).toBe(200);
      });
      // The laptop's session got a new id with the change, and goes on, on either instance.
      const stillSignedIn = await laptop.send(B, 'GET', '/api/users/me/');
      expect(stillSignedIn.status, stillSignedIn.body).toBe(200);
      expect(stillSignedIn.json()).toMatchObject({ username: dora.username });
    }, CASE_TIMEOUT_MS);
  });
});
