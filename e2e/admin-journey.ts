/**
 * What the admin journeys share on top of journey.ts: a superuser made with the management
 * command, a person signed up on the site, a staff member signing in at the admin's own login, and
 * the admin's pages as a person uses them: back to the index by the header's link and on by the
 * index's links, the search box, a filter's links, ticking rows and running an action, reading a
 * list's rows, and a POST sent by a script on the page.
 */
import type { Browser, Locator } from 'playwright-core';
import { beforeAll, expect } from 'vitest';
import type { RunningSite } from './harness.js';
import { PASSWORD, Person, SETUP_TIMEOUT_MS, uniqueName, type Account } from './journey.js';

/**
 * Registers, for the surrounding describe, a superuser without an authenticator app (password
 * PASSWORD), made with the management command once the site is up: call it after
 * useSiteAndBrowser, whose beforeAll runs first. Returns their username.
 */
export function useSuperuser(journey: { readonly site: RunningSite }): string {
  const username = uniqueName('keeper');
  beforeAll(async () => {
    await journey.site.manage(['createsuperuser', '--username', username, '--email', `${username}@example.com`, '--noinput'], { LATCHKEY_SUPERUSER_PASSWORD: PASSWORD });
  }, SETUP_TIMEOUT_MS);
  return username;
}

/** A person who signed up on the site's own page, in their own browser (labelled `label` in the screenshots), and is signed in there. */
export async function signedUp(journey: { readonly site: RunningSite; readonly browser: Browser }, account: Account, label: string): Promise<Person> {
  const person = await Person.open(journey.browser, journey.site, label);
  await person.signUp(account);
  expect(person.pathname()).toBe(`/users/${account.username}/`);
  return person;
}

/** The admin's login with a username and a password, for a staff member without an authenticator app. */
export async function logInToAdmin(person: Person, login: string, password: string, shot = 'admin'): Promise<void> {
  await person.visit('/admin/', `${shot}-login-form`);
  expect(person.pathname()).toBe('/admin/login/');
  await person.fill({ username: login, password });
  await person.press('Log in', `${shot}-index`);
  expect(person.pathname()).toBe('/admin/');
  expect(await person.heading()).toBe('Site administration');
}

/** Back to the index by the header's "… administration" link, then on by the index's link to `page` ("Users", "Tokens", ...). */
export async function openFromIndex(person: Person, page: string, shot: string): Promise<void> {
  await person.follow(/ administration$/, `${shot}-index`, person.page.locator('header'));
  expect(await person.heading()).toBe('Site administration');
  const opened = await person.follow(page, shot, person.page.locator('main table'));
  expect(opened.status(), page).toBe(200);
}

/** Types into a list's search box and presses its button ("Search", or "Filter" on the audit trail). */
export async function search(person: Person, fields: Record<string, string>, shot: string, button = 'Search'): Promise<void> {
  const form = person.page.getByRole('search');
  await person.fill(fields, form);
  await person.press(button, shot, form);
}

/** Follows one choice ("Yes", "No", "All", an event's name) of a list's filter, named as its links are grouped ("Verified", "Active", "Event"). */
export async function filterBy(person: Person, filter: string, choice: string, shot: string): Promise<void> {
  await person.follow(choice, shot, person.page.getByRole('navigation', { name: filter }));
}

/** Ticks the rows named (the checkboxes' labels are "Select <what the row shows>"), chooses the action by its value and presses Go. */
export async function runAction(person: Person, action: string, rows: string[], shot: string): Promise<void> {
  for (const row of rows) await person.page.getByRole('checkbox', { name: `Select ${row}`, exact: true }).check();
  await person.fill({ action });
  await person.press('Go', shot);
}

/** The main table's body rows. */
export function rows(person: Person): Locator {
  return person.page.locator('main table tbody tr');
}

/** Each body row of the main table as a person reads it, whitespace collapsed. */
export async function rowTexts(person: Person): Promise<string[]> {
  return (await rows(person).allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
}

/** Checks that the main table has one row for each of `names` (what a row shows: a username, an address) and no other, in any order. */
export async function expectRowsNaming(person: Person, names: string[]): Promise<void> {
  const texts = await rowTexts(person);
  expect(texts, texts.join('\n')).toHaveLength(names.length);
  for (const name of names) expect(texts.filter((text) => text.split(' ').includes(name)), `rows naming ${name}`).toHaveLength(1);
}

/**
 * Sends a form POST from this browser to the page it is on, as a script on the page could: with
 * the session cookie, and the `csrftoken` cookie's value as the form's token, so that only the
 * server's permission check stands between it and a change. Posting to the page's own address
 * also keeps Chromium's "failed to load resource" line for a refusal out of the console errors the
 * journey checks (harness/browser.ts: the page's own status is the test's to check).
 */
export async function postToThisPage(person: Person, fields: Record<string, string>): Promise<{ status: number; text: string }> {
  const token = (await person.page.context().cookies()).find((cookie) => cookie.name === 'csrftoken')?.value;
  if (token === undefined) throw new Error('This browser holds no csrftoken cookie.');
  return person.page.evaluate(
    async ({ url, body }) => {
      const response = await fetch(url, { method: 'POST', body: new URLSearchParams(body), credentials: 'same-origin' });
      return { status: response.status, text: await response.text() };
    },
    { url: person.page.url(), body: { ...fields, csrfmiddlewaretoken: token } },
  );
}
