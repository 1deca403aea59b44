/**
 * What the journey tests share on top of the harness: a Person (one browser context, that is one
 * person's browser) who visits pages, follows links, fills and submits forms, and gets a
 * screenshot of every page they land on; the mailbox helpers; and the account forms as a person
 * fills them.
 */
import { createHash, randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Browser, BrowserContextOptions, Cookie, Locator, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { openSessionData, sealSessionData } from '../packages/latchkey/src/sessions/sealed-data.js';
import {
  expectNoConsoleErrors,
  fillForm,
  launchBrowser,
  newPage,
  screenshot,
  startSite,
  submit,
  type ReceivedEmail,
  type RunningSite,
  type StartSiteOptions,
  type TestSmtpServer,
} from './harness.js';

/** Generous: a 2-core machine runs a site, Chromium and argon2 at Django's parameters at once. */
export const JOURNEY_TIMEOUT_MS = 90_000;
export const SETUP_TIMEOUT_MS = 90_000;

/**
 * Passwords the default validators accept (long enough, not common, not numeric) and unlike every
 * name used here: they hold at most one hex digit, so no random suffix of uniqueName can bring a
 * username or address within the similarity validator's 0.7 of them (the earlier 'Copper-Meadow-9083'
 * shared "0389" and the "d", "o", "r" of dora and failed now and then).
 */
export const PASSWORD = 'Quartz-Willow-Sunny';
export const NEW_PASSWORD = 'Hushing-Lynx-Quiver';

/** A name no other test in the run uses, so that tests sharing a site never meet: `ada3f9c1`. */
export function uniqueName(prefix: string): string {
  return `${prefix}${randomBytes(3).toString('hex')}`;
}

export interface Account {
  username: string;
  email: string;
  password: string;
}

/** A fresh account's details (not yet created): a username, an address at example.com, a password. */
export function newAccount(prefix: string): Account {
  const username = uniqueName(prefix);
  return { username, email: `${username}@example.com`, password: PASSWORD };
}

/**
 * Password hashing at a small cost, as Django's and Latchkey's own test settings do: the journeys
 * hash a password at every signup, login and change, and at Django's production parameters
 * (argon2id, 100 MiB, 2 passes) that is most of a 2-core machine's time in this suite. The
 * algorithm and every code path stay the same; only the work factor changes. A test that passes
 * `env` can put the real parameters back.
 */
export const FAST_HASHING_ENV: Record<string, string> = {
  LATCHKEY_ARGON2_MEMORY_COST: '1024',
  LATCHKEY_ARGON2_TIME_COST: '1',
  LATCHKEY_ARGON2_PARALLELISM: '1',
};

/**
 * Starts the site (with FAST_HASHING_ENV under `options.env`) and Chromium together; if either
 * fails, stops the other before rethrowing, so that a failed beforeAll leaves nothing running.
 */
export async function startSiteAndBrowser(options: StartSiteOptions = {}): Promise<{ site: RunningSite; browser: Browser }> {
  const { sites, browser } = await startSitesAndBrowser([options]);
  return { site: sites[0]!, browser };
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/**
 * Registers, for the surrounding describe, one site and one Chromium started before its tests and
 * stopped after them (even when a test fails). Read `site` and `browser` inside the tests.
 */
export function useSiteAndBrowser(options: StartSiteOptions = {}): { readonly site: RunningSite; readonly browser: Browser } {
  let started: { site: RunningSite; browser: Browser } | undefined;
  beforeAll(async () => {
    started = await startSiteAndBrowser(options);
  }, SETUP_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.allSettled([started?.browser.close(), started?.site.stop()]);
  }, SETUP_TIMEOUT_MS);
  const running = () => {
    if (!started) throw new Error('the site and browser exist only inside the tests');
    return started;
  };
  return {
    get site() {
      return running().site;
    },
    get browser() {
      return running().browser;
    },
  };
}

/** Several sites (one per options, e.g. mandatory and optional verification) and Chromium, all at once. */
export async function startSitesAndBrowser(optionsList: StartSiteOptions[]): Promise<{ sites: RunningSite[]; browser: Browser }> {
  const [browser, sites] = await Promise.all([
    settle(launchBrowser()),
    Promise.all(optionsList.map((options) => settle(startSite({ ...options, env: { ...FAST_HASHING_ENV, ...options.env } })))),
  ]);
  const started = sites.flatMap((site) => (site.ok ? [site.value] : []));
  if (browser.ok && started.length === sites.length) return { browser: browser.value, sites: started };
  const failure = [browser, ...sites].find((outcome) => !outcome.ok);
  await Promise.allSettled([
    ...(browser.ok ? [browser.value.close()] : []),
    ...started.map((site) => site.stop()),
  ]);
  throw failure && !failure.ok ? failure.error : new Error('unreachable');
}

/**
 * One person at one browser (a fresh context: their own cookies). Every page they land on is
 * screenshotted (named `<person>-<what>` when a test has several people) and checked for console
 * errors, which also catches a stylesheet that failed to load.
 */
export class Person {
  private constructor(
    readonly page: Page,
    private readonly label: string,
  ) {}

  /** `contextOptions` as Playwright's, e.g. `{ userAgent }` for a phone. */
  static async open(browser: Browser, site: RunningSite, label = '', contextOptions: BrowserContextOptions = {}): Promise<Person> {
    return new Person(await newPage(browser, { ...contextOptions, baseURL: site.url }), label);
  }

  /** Opens a path (or a full URL, such as a link from an email) as if typed into the address bar. */
  async visit(pathOrUrl: string, shot: string): Promise<Response> {
    const response = await this.page.goto(pathOrUrl);
    if (!response) throw new Error(`No response for ${pathOrUrl}.`);
    await this.landed(shot);
    return response;
  }

  /** Clicks a link by its accessible name (within `scope`, e.g. the nav) and waits for the page it leads to. */
  async follow(linkName: string | RegExp, shot: string, scope: Page | Locator = this.page): Promise<Response> {
    const link = scope.getByRole('link', { name: linkName, exact: typeof linkName === 'string' });
    const response = this.page.waitForResponse(
      (candidate) => candidate.request().isNavigationRequest() && candidate.frame() === this.page.mainFrame() && !(candidate.status() >= 300 && candidate.status() < 400),
      { timeout: 15_000 },
    );
    response.catch(() => undefined);
    await link.click({ timeout: 10_000 });
    const final = await response;
    await this.page.waitForLoadState('load');
    await this.landed(shot);
    return final;
  }

  /** Types into the fields by name (see the harness's fillForm). */
  fill(fields: Record<string, string | boolean>, scope: Page | Locator = this.page): Promise<void> {
    return fillForm(scope, fields);
  }

  /** Clicks the button with this name and waits for the page it leads to. */
  async press(buttonName: string | RegExp, shot: string, scope: Page | Locator = this.page): Promise<Response> {
    const response = await submit(scope, buttonName);
    await this.landed(shot);
    return response;
  }

  /** The site's header navigation. */
  nav(): Locator {
    return this.page.getByRole('navigation', { name: 'Account' });
  }

  /** The flash messages shown on this page, in order. */
  messages(): Promise<string[]> {
    return this.page.locator('.lk-message').allTextContents();
  }

  async heading(): Promise<string> {
    return ((await this.page.locator('h1').textContent()) ?? '').trim();
  }

  /** The page's main content as a person reads it (whitespace collapsed). */
  async text(): Promise<string> {
    return ((await this.page.locator('main').innerText()) ?? '').replace(/\s+/g, ' ').trim();
  }

  /** The errors shown on the form (field errors and form errors). */
  async formErrors(): Promise<string[]> {
    return (await this.page.locator('.lk-errors li').allTextContents()).map((error) => error.trim());
  }

  pathname(): string {
    return new URL(this.page.url()).pathname;
  }

  async sessionCookie(): Promise<Cookie | undefined> {
    return (await this.page.context().cookies()).find((cookie) => cookie.name === 'sessionid');
  }

  /** Signs up through the signup page (username project: email, username, password twice). */
  async signUp(account: Account, shot = 'signup'): Promise<Response> {
    await this.visit('/accounts/signup/', `${shot}-form`);
    await this.fill({ email: account.email, username: account.username, password1: account.password, password2: account.password });
    return this.press('Sign up', `${shot}-submitted`);
  }

  /** Signs in through the login page (the example site logs in by username). */
  async signIn(login: string, password: string, options: { remember?: boolean; shot?: string; path?: string } = {}): Promise<Response> {
    const shot = options.shot ?? 'login';
    await this.visit(options.path ?? '/accounts/login/', `${shot}-form`);
    await this.fill({ login, password, ...(options.remember === undefined ? {} : { remember: options.remember }) });
    return this.press('Sign in', `${shot}-submitted`);
  }

  /** Who the home page says is signed in: `Signed in as ada.` or `You are not signed in.` */
  async homeStatus(shot = 'home'): Promise<string> {
    await this.visit('/', shot);
    return this.text();
  }

  async close(): Promise<void> {
    await this.page.context().close();
  }

  private async landed(shot: string): Promise<void> {
    await screenshot(this.page, this.label ? `${this.label}-${shot}` : shot);
    expectNoConsoleErrors(this.page);
  }
}

export interface EmailMatch {
  /** The recipient, or several of which any will do. */
  to: string | string[];
  /** Part of the subject, or a pattern for it. */
  subject: string | RegExp;
}

function matches(message: ReceivedEmail, match: EmailMatch): boolean {
  const to = message.envelope.to.map((address) => address.toLowerCase());
  const wanted = (Array.isArray(match.to) ? match.to : [match.to]).map((address) => address.toLowerCase());
  const subject = typeof match.subject === 'string' ? message.subject.includes(match.subject) : match.subject.test(message.subject);
  return wanted.some((address) => to.includes(address)) && subject;
}

/** The messages received so far for this address with this subject. */
export function emailsTo(smtp: TestSmtpServer, match: EmailMatch): ReceivedEmail[] {
  return smtp.messages.filter((message) => matches(message, match));
}

/**
 * Waits for the `count`-th message to this address with this subject (some flows send in the
 * background) and returns it. Tests sharing a site each use their own addresses, so they never
 * wait on each other's mail.
 */
export async function waitForEmail(smtp: TestSmtpServer, match: EmailMatch, options: { count?: number; timeoutMs?: number } = {}): Promise<ReceivedEmail> {
  const count = options.count ?? 1;
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const found = emailsTo(smtp, match);
    if (found.length >= count) return found[count - 1]!;
    if (Date.now() > deadline) {
      const received = smtp.messages.map((message) => `"${message.subject}" to ${message.envelope.to.join(', ')}`);
      throw new Error(`No email #${count} "${String(match.subject)}" to ${String(match.to)}; received: ${received.join('; ') || 'none'}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every flash message is shown in a `role=status` list: assert on what a person reads. */
export async function expectMessage(person: Person, text: string | RegExp): Promise<void> {
  const messages = await person.messages();
  expect(messages.some((message) => (typeof text === 'string' ? message.includes(text) : text.test(message))), `messages on ${person.page.url()}: ${JSON.stringify(messages)}`).toBe(true);
}

/**
 * Makes a person's login look `seconds` old, as if they had stepped away, so that the next change
 * asks them to confirm it is them: the reauthentication window (5 minutes) is fixed and the site
 * runs on the real clock, so the alternative would be to wait. Only the session's "authenticated
 * at" moment changes, in the site's own SQLite file (`databasePath`, the journey's DATABASE_URL),
 * opened and sealed again as the site seals a session's data (under its secret key and the id in
 * the person's cookie).
 */
export async function ageLogin(site: Pick<RunningSite, 'secretKey'>, databasePath: string, person: Person, seconds: number): Promise<void> {
  const cookie = await person.sessionCookie();
  if (!cookie) throw new Error('This browser has no session cookie.');
  const idHash = createHash('sha256').update(cookie.value, 'utf8').digest('hex');
  const database = new Database(databasePath);
  try {
    database.pragma('busy_timeout = 5000');
    const row = database.prepare<[string], { data: string }>('SELECT data FROM latchkey_sessions WHERE id_hash = ?').get(idHash);
    if (!row) throw new Error('The site has no session for this browser.');
    const data = openSessionData(site.secretKey, cookie.value, row.data);
    expect(data).toHaveProperty('_authenticated_at');
    const then = new Date(Date.now() - seconds * 1000).toISOString();
    const sealed = sealSessionData(site.secretKey, cookie.value, { ...data, _authenticated_at: then });
    expect(database.prepare('UPDATE latchkey_sessions SET data = ? WHERE id_hash = ?').run(sealed, idHash).changes).toBe(1);
  } finally {
    database.close();
  }
}
