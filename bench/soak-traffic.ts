/**
 * The people of the soak benchmark (bench/soak.ts): each a loop that runs until told to stop, from
 * a loopback address of its own (so that the site's per-IP rate limits, which stay on, see
 * different people), through the round-robin proxy. Every HTTP request is timed and judged by
 * its status; a person who meets an error carries on, as a person would reload.
 *
 * - token: an app calling GET /api/users/me/ with `Authorization: Token <key>`;
 * - session: a browser calling the same API with its session cookie, and the headless session;
 * - pages: a signed-in browser viewing the home page, its user page and its email page, and
 *   someone signed out viewing the login page;
 * - login: signing in (headless and token API in turn, Django's argon2 parameters) and out;
 * - signup: signing up, confirming the address from the mail, signing in and out.
 *
 * Logins and signups are paced under the site's limits per address (login 30/m/ip, signup 20/m/ip).
 */
import { keyOf, mailedLink, type RunningCluster } from '../e2e/harness/cluster.js';
import { nextClientAddress, Visitor, type Reply } from '../e2e/harness/visitor.js';

export const PASSWORD = 'Velvet-Harbor-4127';
/** Between two requests of the API and page users: keeps the load steady rather than flat out. */
const BROWSING_PAUSE_MS = 50;
/** Between two logins of one login user: about 20 a minute, under login's 30/m/ip. */
const LOGIN_PAUSE_MS = 2_500;
/** Between two signups of one signup user: under signup's 20/m/ip, with its login under 30/m/ip. */
const SIGNUP_PAUSE_MS = 5_000;

export interface Traffic {
  cluster: RunningCluster;
  /** Called with every request's outcome. */
  record(kind: string, milliseconds: number, error?: string): void;
  /** Called with an error that is not a request's (a mail that never came). */
  fault(error: string): void;
  /** False once the run is over: each loop ends after its current step. */
  running(): boolean;
}

export interface Account {
  username: string;
  email: string;
}

let accounts = 0;
/** A new account's details: a name no run of this process has used. */
export function newAccount(prefix: string): Account {
  accounts += 1;
  const username = `${prefix}${accounts}${Math.random().toString(36).slice(2, 8)}`;
  return { username, email: `${username}@example.com` };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sends, times and judges one request: an unexpected status (or none) is an error. */
async function timed(traffic: Traffic, kind: string, expected: number, call: () => Promise<Reply>): Promise<Reply | undefined> {
  const started = performance.now();
  try {
    const reply = await call();
    const error = reply.status === expected ? undefined : `${kind}: ${reply.status} instead of ${expected}: ${reply.body.slice(0, 160)}`;
    traffic.record(kind, performance.now() - started, error);
    return error === undefined ? reply : undefined;
  } catch (error) {
    traffic.record(kind, performance.now() - started, `${kind}: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** Signs up and confirms the address (production makes it mandatory). Not timed: a step of setting up. */
export async function signUpAndConfirm(cluster: RunningCluster, account: Account, person = new Visitor(cluster.url)): Promise<void> {
  const signup = await person.headless('POST', '/auth/signup', { json: { email: account.email, username: account.username, password: PASSWORD } });
  if (signup.status !== 401) throw new Error(`Signing up ${account.username} answered ${signup.status}: ${signup.body.slice(0, 200)}`);
  const key = keyOf(await mailedLink(cluster.smtp, account.email, '/accounts/confirm-email/'));
  const confirmed = await person.headless('POST', '/auth/email/verify', { json: { key } });
  if (confirmed.status !== 401) throw new Error(`Confirming ${account.email} answered ${confirmed.status}: ${confirmed.body.slice(0, 200)}`);
}

export async function tokenUser(traffic: Traffic, account: Account): Promise<void> {
  const app = new Visitor(traffic.cluster.url);
  const obtained = await app.send('POST', '/api/auth-token/', { json: { username: account.username, password: PASSWORD } });
  if (obtained.status !== 200) throw new Error(`POST /api/auth-token/ answered ${obtained.status}: ${obtained.body.slice(0, 200)}`);
  const headers = { authorization: `Token ${obtained.json().token as string}` };
  while (traffic.running()) {
    await timed(traffic, 'api, token', 200, () => app.send('GET', '/api/users/me/', { headers }));
    await sleep(BROWSING_PAUSE_MS);
  }
  app.close();
}

export async function sessionUser(traffic: Traffic, account: Account): Promise<void> {
  const browser = new Visitor(traffic.cluster.url);
  const login = await browser.headless('POST', '/auth/login', { json: { username: account.username, password: PASSWORD } });
  if (login.status !== 200) throw new Error(`Signing in ${account.username} answered ${login.status}: ${login.body.slice(0, 200)}`);
  for (let step = 0; traffic.running(); step++) {
    if (step % 10 === 9) await timed(traffic, 'headless session', 200, () => browser.headless('GET', '/auth/session'));
    else await timed(traffic, 'api, session', 200, () => browser.send('GET', '/api/users/me/'));
    await sleep(BROWSING_PAUSE_MS);
  }
  browser.close();
}

export async function pagesUser(traffic: Traffic, account: Account): Promise<void> {
  const browser = new Visitor(traffic.cluster.url);
  const stranger = new Visitor(traffic.cluster.url);
  const form = await browser.send('GET', '/accounts/login/');
  const csrf = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const login = await browser.send('POST', '/accounts/login/', { form: { csrfmiddlewaretoken: csrf, login: account.username, password: PASSWORD } });
  if (login.status !== 302) throw new Error(`Signing in ${account.username} through the form answered ${login.status}: ${login.body.slice(0, 200)}`);
  const pages = ['/', `/users/${account.username}/`, '/accounts/email/'];
  for (let step = 0; traffic.running(); step++) {
    if (step % 4 === 3) await timed(traffic, 'page, signed out', 200, () => stranger.send('GET', '/accounts/login/'));
    else await timed(traffic, 'page, signed in', 200, () => browser.send('GET', pages[step % 4]!));
    await sleep(BROWSING_PAUSE_MS);
  }
  browser.close();
  stranger.close();
}

export async function loginUser(traffic: Traffic, account: Account): Promise<void> {
  const credentials = { username: account.username, password: PASSWORD };
  // One machine, a fresh browser (cookie jar) for each login.
  const address = nextClientAddress();
  for (let step = 0; traffic.running(); step++) {
    const person = new Visitor(traffic.cluster.url, address);
    if (step % 2 === 0) {
      if (await timed(traffic, 'login, headless', 200, () => person.headless('POST', '/auth/login', { json: credentials }))) {
        await timed(traffic, 'headless session', 200, () => person.headless('GET', '/auth/session'));
        await timed(traffic, 'logout, headless', 401, () => person.headless('DELETE', '/auth/session'));
      }
    } else {
      await timed(traffic, 'login, token API', 200, () => person.send('POST', '/api/auth-token/', { json: credentials }));
    }
    person.close();
    await sleep(LOGIN_PAUSE_MS);
  }
}

/** One of these at most: it clears the SMTP server's mailbox once it has read its mail. */
export async function signupUser(traffic: Traffic): Promise<void> {
  const address = nextClientAddress();
  while (traffic.running()) {
    const account = newAccount('soak');
    const person = new Visitor(traffic.cluster.url, address);
    const json = { email: account.email, username: account.username, password: PASSWORD };
    if (await timed(traffic, 'signup', 401, () => person.headless('POST', '/auth/signup', { json }))) {
      try {
        const key = keyOf(await mailedLink(traffic.cluster.smtp, account.email, '/accounts/confirm-email/'));
        await timed(traffic, 'confirm email', 401, () => person.headless('POST', '/auth/email/verify', { json: { key } }));
        await timed(traffic, 'login, headless', 200, () => person.headless('POST', '/auth/login', { json: { username: account.username, password: PASSWORD } }));
        await timed(traffic, 'logout, headless', 401, () => person.headless('DELETE', '/auth/session'));
      } catch (error) {
        traffic.fault(error instanceof Error ? error.message : String(error));
      }
      // The mail has been read: the SMTP server need not keep ten minutes of it.
      traffic.cluster.smtp.clear();
    }
    person.close();
    await sleep(SIGNUP_PAUSE_MS);
  }
}
