/**
 * The users list's column headers and its search by name, on each database: a header sorts by its
 * column, then the other way; the order, the search and the filters survive paging and one
 * another; a page boundary inside equal names loses and repeats nobody; a bad `o` is the default
 * order, never an error.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { UsernameType } from '../../config/settings.js';
import { addPerson, openAdmin, signInToAdmin } from '../../testing/admin-pages.js';
import { testDatabaseKinds } from '../../testing/database.js';
import type { TestLatchkey } from '../../testing/latchkey.js';
import type { PageClient } from '../../testing/pages.js';

const USERS = '/admin/users/user/';

/** The list's rows, by the text of each row's link (the username, or the address in an email project). */
function rowsOf(body: string): string[] {
  return [...body.matchAll(/\/change\/">([^<]*)<\/a><\/td>/g)].map((match) => match[1]!);
}

/** A column header: its link and, if the list is sorted by it, aria-sort. */
function headerOf(body: string, label: string): { url: string; sorted: string | undefined } {
  const match = new RegExp(`<th scope="col"(?: aria-sort="(\\w+)")?><a href="([^"]*)">${label}</a>`).exec(body);
  if (match === null) throw new Error(`no sortable header "${label}"`);
  return { url: match[2]!.replaceAll('&amp;', '&'), sorted: match[1] };
}

const nextPageOf = (body: string) => /<a href="([^"]*)">Next page<\/a>/.exec(body)?.[1]?.replaceAll('&amp;', '&');

describe.each(testDatabaseKinds())('the users list’s order and name search on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(usernameType: UsernameType = 'username'): Promise<void> {
    ({ latchkey, browser } = await openAdmin(kind, { usernameType }));
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true }, { name: 'Root Admin' });
    expect((await signInToAdmin(browser, usernameType === 'username' ? 'root' : 'root@example.com')).headers.location).toBe('/admin/');
  }

  /** People with no password (quick to make), a minute apart. */
  async function people(entries: [login: string, name: string, roles?: { isStaff?: boolean }][]): Promise<void> {
    for (const [login, name, roles] of entries) {
      latchkey.clock.advance(60_000);
      await createUser(latchkey.deps, { username: login, email: `${login}@example.org`, name, password: null, emailVerified: false, ...roles });
    }
  }

  it('sorts by a column header, then the other way, newest first by default', async () => {
    await setUp();
    await people([
      ['carol', 'Carol Shaw'],
      ['Ada', 'Ada Lovelace'],
      ['bob', 'bob kahn'],
    ]);
    const first = await browser.get(USERS);
    expect(rowsOf(first.body)).toEqual(['bob', 'Ada', 'carol', 'root']);
    expect(headerOf(first.body, 'ID')).toEqual({ url: `${USERS}?o=id`, sorted: 'descending' });
    expect(headerOf(first.body, 'Username')).toEqual({ url: `${USERS}?o=username`, sorted: undefined });

    const byName = await browser.get(headerOf(first.body, 'Name').url);
    expect(rowsOf(byName.body)).toEqual(['Ada', 'bob', 'carol', 'root']);
    expect(headerOf(byName.body, 'Name')).toEqual({ url: `${USERS}?o=-name`, sorted: 'ascending' });
    expect(headerOf(byName.body, 'ID')).toEqual({ url: `${USERS}?o=id`, sorted: undefined });
    const byNameDown = await browser.get(headerOf(byName.body, 'Name').url);
    expect(rowsOf(byNameDown.body)).toEqual(['root', 'carol', 'bob', 'Ada']);
    expect(headerOf(byNameDown.body, 'Name')).toEqual({ url: `${USERS}?o=name`, sorted: 'descending' });

    expect(rowsOf((await browser.get(`${USERS}?o=username`)).body)).toEqual(['Ada', 'bob', 'carol', 'root']);
    expect(rowsOf((await browser.get(`${USERS}?o=-email`)).body)).toEqual(['root', 'carol', 'bob', 'Ada']);
    expect(rowsOf((await browser.get(`${USERS}?o=date_joined`)).body)).toEqual(['root', 'carol', 'Ada', 'bob']);
    const oldest = await browser.get(`${USERS}?o=id`);
    expect(rowsOf(oldest.body)).toEqual(['root', 'carol', 'Ada', 'bob']);
    // Back to the default order, which the links leave out.
    expect(headerOf(oldest.body, 'ID')).toEqual({ url: USERS, sorted: 'ascending' });
    expect(oldest.body).toContain(`<time datetime="${latchkey.clock.now().toISOString()}">`);
  });

  it('keeps the order and the filters through a search, its pages and its filter links, losing nobody at a page edge among equal names', async () => {
    await setUp();
    // 120 staff with one name and 3 who are not: the pages split the equal names.
    const entries: [string, string, { isStaff: boolean }][] = [];
    for (let index = 0; index < 120; index++) entries.push([`twin${String(index).padStart(3, '0')}`, 'Grace Hopper', { isStaff: true }]);
    entries.push(['plain1', 'Grace Hopper', { isStaff: false }], ['plain2', 'Grace Hopper', { isStaff: false }], ['other', 'Alan Turing', { isStaff: true }]);
    await people(entries);

    const first = await browser.get(`${USERS}?q=hop&is_staff=1&o=-name`);
    expect(first.body).toContain('<input type="hidden" name="o" value="-name">');
    expect(first.body).toContain('<input type="hidden" name="is_staff" value="1">');
    expect(headerOf(first.body, 'Name')).toEqual({ url: `${USERS}?q=hop&is_staff=1&o=name`, sorted: 'descending' });
    expect(first.body).toContain(`href="${USERS}?q=hop&amp;is_staff=0&amp;o=-name"`);
    const next = nextPageOf(first.body);
    expect(next).toMatch(new RegExp(`^${USERS}\\?q=hop&is_staff=1&o=-name&after=\\d+$`));
    const second = await browser.get(next!);
    expect(nextPageOf(second.body)).toBeUndefined();
    // Equal names, newest first (descending by id too): every twin once, and nobody else.
    const twins = entries.filter(([login]) => login.startsWith('twin')).map(([login]) => login);
    expect([...rowsOf(first.body), ...rowsOf(second.body)]).toEqual(twins.reverse());
    expect(rowsOf(first.body)).toHaveLength(100);
  });

  it('finds users by the start of their name or of its second word', async () => {
    await setUp();
    await people([
      ['ada', 'Ada Lovelace'],
      ['grace', 'Grace Brewster Hopper'],
      ['xss', '<b>Love</b> Bug'],
    ]);
    expect(rowsOf((await browser.get(`${USERS}?q=ADA`)).body)).toEqual(['ada']);
    expect(rowsOf((await browser.get(`${USERS}?q=love`)).body)).toEqual(['ada']);
    expect(rowsOf((await browser.get(`${USERS}?q=ada%20lov`)).body)).toEqual(['ada']);
    expect(rowsOf((await browser.get(`${USERS}?q=brew`)).body)).toEqual(['grace']);
    // The third word is not searched.
    expect((await browser.get(`${USERS}?q=hopper`)).body).toContain('No user matches.');
    const markup = await browser.get(`${USERS}?q=%3Cb%3E`);
    expect(rowsOf(markup.body)).toEqual(['xss']);
    expect(markup.body).toContain('<td>&lt;b&gt;Love&lt;/b&gt; Bug</td>');
  });

  it('gives the default order for a bad o, and sorts by address where users sign in with it', async () => {
    await setUp('email');
    for (const login of ['zoe', 'amy']) await addPerson(latchkey, login);
    const newest = ['amy@example.com', 'zoe@example.com', 'root@example.com'];
    for (const bad of ['username', 'password', '-', '--id', 'name%00', 'o=id', 'id,name']) {
      const page = await browser.get(`${USERS}?o=${bad}`);
      expect(page.statusCode, bad).toBe(200);
      expect(rowsOf(page.body), bad).toEqual(newest);
      expect(headerOf(page.body, 'ID'), bad).toEqual({ url: `${USERS}?o=id`, sorted: 'descending' });
    }
    expect(rowsOf((await browser.get(`${USERS}?o=${encodeURIComponent('["id"]')}`)).body)).toEqual(newest);
    expect((await browser.get(`${USERS}?o=id&o=name`)).statusCode).toBe(200);
    expect(rowsOf((await browser.get(`${USERS}?o=email`)).body)).toEqual(['amy@example.com', 'root@example.com', 'zoe@example.com']);
    expect((await browser.get(USERS)).body).not.toContain('>Username</a>');
  });

  it('starts again from the first page when the user a page came after has been deleted', async () => {
    await setUp();
    await people([
      ['ada', 'Ada'],
      ['bob', 'Bob'],
    ]);
    const bob = await latchkey.deps.store.users.findByUsername('bob');
    await latchkey.deps.store.users.delete(bob!.id);
    const gone = await browser.get(`${USERS}?o=name&q=&after=${bob!.id}`);
    expect(gone.headers.location).toBe(`${USERS}?o=name`);
    const restarted = await browser.get(gone.headers.location!);
    expect(restarted.body).toContain('The user that page came after no longer exists: here is the first page.');
    expect(rowsOf(restarted.body)).toEqual(['ada', 'root']);
    // By id the place is still known: past the end, the page is only empty.
    expect((await browser.get(`${USERS}?o=id&after=${bob!.id}`)).body).toContain('No user matches.');
  });
});
