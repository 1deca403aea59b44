import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContextOptions, type Locator, type Page, type Response } from 'playwright-core';
import { expect } from 'vitest';

const e2eDirectory = fileURLToPath(new URL('..', import.meta.url));
const artifactsDirectory = join(e2eDirectory, 'artifacts');

export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
}

export function chromiumAvailable(): boolean {
  return existsSync(chromiumPath());
}

/**
 * Whether this machine runs the browser suites. When it cannot, says why in one line; under CI
 * (which installs Chromium) a missing Chromium is an error, so the suites cannot vanish unnoticed.
 * Use as `describe.runIf(browserTestsEnabled())(...)`.
 */
export function browserTestsEnabled(): boolean {
  if (chromiumAvailable()) return true;
  const reason = `Chromium not found at ${chromiumPath()} (set CHROMIUM_PATH, or apt-get install -y chromium)`;
  if (process.env.CI) throw new Error(`CI must run the browser journeys, but ${reason}.`);
  console.log(`left out: browser journeys in ${testFileName()}: ${reason}.`);
  return false;
}

/** Debian's Chromium, headless, with the background traffic that makes runs noisy switched off. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

const consoleErrors = new WeakMap<Page, string[]>();

/**
 * A page in a fresh browser context (its own cookies: one context is one person's browser),
 * already collecting console errors for expectNoConsoleErrors. Pass `{ baseURL: site.url }` to
 * navigate with paths.
 */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  watchConsole(page);
  return page;
}

/** Starts collecting console errors and uncaught page errors; newPage does this already. */
export function watchConsole(page: Page): void {
  if (consoleErrors.has(page)) return;
  const errors: string[] = [];
  consoleErrors.set(page, errors);
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const source = message.location().url;
    // Chromium also logs the page's own 4xx/5xx status this way; that status is the test's to check
    // (page.goto and submit return the response), and a form re-rendered with a 400 is no error.
    if (source === page.url() && message.text().startsWith('Failed to load resource: the server responded with a status of')) return;
    errors.push(`console error at ${source || page.url()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`uncaught error at ${page.url()}: ${error.message}`));
}

/**
 * Fails if the page logged a console error or threw since it was opened (or since the last call).
 * Chromium logs a failed subresource (a missing stylesheet, a script refused by the CSP) as a
 * console error, so this also catches those. `allow` lists expected errors.
 */
export function expectNoConsoleErrors(page: Page, options: { allow?: RegExp[] } = {}): void {
  const errors = consoleErrors.get(page);
  if (!errors) throw new Error('This page is not watched: open it with newPage() or call watchConsole(page) before navigating.');
  const unexpected = errors.filter((error) => !(options.allow ?? []).some((pattern) => pattern.test(error)));
  errors.length = 0;
  if (unexpected.length > 0) throw new Error(`The page logged ${unexpected.length} console error(s):\n${unexpected.join('\n')}`);
}

const screenshotCounts = new Map<string, number>();

/**
 * Writes a full-page screenshot to e2e/artifacts/<test file>/<full test name>/<NN>-<name>.png, numbered
 * in the order taken within the test, and returns the path. The test's folder is emptied at its
 * first screenshot so that a run never mixes with pages of an earlier one.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const { testPath, currentTestName } = expect.getState();
  if (!testPath || !currentTestName) throw new Error('screenshot() must be called inside a test.');
  const directory = join(artifactsDirectory, testFileName(testPath), slug(currentTestName, 120));
  const key = `${testPath}\0${currentTestName}`;
  const count = (screenshotCounts.get(key) ?? 0) + 1;
  screenshotCounts.set(key, count);
  if (count === 1) rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `${String(count).padStart(2, '0')}-${slug(name)}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The test file's path under e2e/ without `.test.ts`: `journeys/signup` for e2e/journeys/signup.test.ts. */
function testFileName(testPath = expect.getState().testPath ?? 'unknown'): string {
  const path = relative(e2eDirectory, testPath).replace(/\.test\.ts$/, '');
  return path.startsWith('..') ? basename(path) : path;
}

function slug(text: string, maxLength = 80): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, maxLength) || 'unnamed';
}

type Scope = Page | Locator;

function pageOf(scope: Scope): Page {
  return 'goto' in scope ? scope : scope.page();
}

/** The form that holds the button with this text, to scope fillForm and submit on a page with several forms. */
export function formWithButton(page: Page, buttonText: string | RegExp): Locator {
  return page.locator('form', { has: page.getByRole('button', { name: buttonText, exact: typeof buttonText === 'string' }) });
}

/**
 * Fills fields by their name attribute: a string fills a text field, picks a select's option or
 * checks the radio button with that value; a boolean checks or unchecks a checkbox. Fails when a
 * name matches no field, or several fields in the scope (narrow it with formWithButton).
 */
export async function fillForm(scope: Scope, fields: Record<string, string | boolean>): Promise<void> {
  for (const [name, value] of Object.entries(fields)) {
    const selector = `[name=${JSON.stringify(name)}]`;
    const field = scope.locator(selector);
    await field.first().waitFor({ state: 'attached', timeout: 5_000 }).catch(() => {
      throw new Error(`No field named "${name}" here (${pageOf(scope).url()}).`);
    });
    const matches = await field.all();
    const types = await Promise.all(matches.map((match) => match.getAttribute('type')));
    if (typeof value === 'string' && types.every((type) => type === 'radio')) {
      await scope.locator(`${selector}[value=${JSON.stringify(value)}]`).check();
      continue;
    }
    if (matches.length > 1) {
      throw new Error(`${matches.length} fields are named "${name}" here; narrow the scope, e.g. fillForm(formWithButton(page, 'Add'), ...).`);
    }
    if (typeof value === 'boolean') await field.setChecked(value);
    else if ((await scope.locator(`select${selector}`).count()) > 0) await field.selectOption(value);
    else await field.fill(value);
  }
}

/**
 * Clicks a submit button (the one with this accessible name, or the only one in the scope) and
 * waits until the page it leads to, after any redirects, has loaded. Returns that page's response,
 * so that a test can check a 403 or 429. Chromium's own form validation (a `required` field left
 * empty) blocks the submission; the error then names the invalid fields.
 */
export async function submit(scope: Scope, buttonText?: string | RegExp): Promise<Response> {
  const page = pageOf(scope);
  const button =
    buttonText === undefined
      ? scope.locator('button[type=submit], button:not([type]), input[type=submit]')
      : scope.getByRole('button', { name: buttonText, exact: typeof buttonText === 'string' });
  const timeout = 15_000;
  const response = page.waitForResponse(
    (candidate) =>
      candidate.request().isNavigationRequest() && candidate.frame() === page.mainFrame() && !isRedirect(candidate.status()),
    { timeout },
  );
  const navigated = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame(), timeout });
  // Attach the handlers now: if the click fails, neither wait may end as an unhandled rejection.
  response.catch(() => undefined);
  navigated.catch(() => undefined);
  await button.click();
  try {
    const [final] = await Promise.all([response, navigated]);
    await page.waitForLoadState('load');
    return final;
  } catch (error) {
    const invalidFields = await scope.locator('input:invalid, select:invalid, textarea:invalid').all();
    const invalid = await Promise.all(invalidFields.map(async (field) => (await field.getAttribute('name')) ?? '(unnamed)'));
    if (invalid.length > 0) throw new Error(`The browser refused to submit the form: invalid fields ${invalid.join(', ')}.`);
    throw error;
  }
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}
