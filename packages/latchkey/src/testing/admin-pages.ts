/**
 * What the admin's page tests share: a Latchkey with a browser on it, people made with one known
 * password and an address at example.com, and the admin's own login.
 */
import type { User } from '../account/model.js';
import { createUser, type CreateUserInput } from '../account/users.js';
import type { SettingValues, UsernameType } from '../config/settings.js';
import type { LatchkeyPluginOptions } from '../http/plugin.js';
import type { TestDatabaseKind } from './database.js';
import { createTestLatchkey, type TestLatchkey } from './latchkey.js';
import { PageClient } from './pages.js';

/** Every person's password in the admin's page tests. */
export const ADMIN_PASSWORD = 'a long enough passphrase';

/** Where the tests' own admin actions come from. */
export const ADMIN_CLIENT = { ip: '203.0.113.7', userAgent: 'test' };

export interface AdminRoles {
  isStaff?: boolean;
  isSuperuser?: boolean;
}

/** A Latchkey on the database and a browser on its pages. */
export async function openAdmin(
  kind: TestDatabaseKind,
  options: { settings?: Partial<SettingValues>; usernameType?: UsernameType; plugin?: LatchkeyPluginOptions } = {},
): Promise<{ latchkey: TestLatchkey; browser: PageClient }> {
  const latchkey = await createTestLatchkey({
    kind,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.usernameType ? { usernameType: options.usernameType } : {}),
  });
  const browser = await PageClient.create(latchkey, options.plugin ? { plugin: options.plugin } : {});
  return { latchkey, browser };
}

/**
 * A person `username`, at `${username}@example.com` (verified unless `overrides` say otherwise),
 * with ADMIN_PASSWORD; where the project logs in by email, the username only names the address.
 */
export function addPerson(latchkey: TestLatchkey, username: string, roles: AdminRoles = {}, overrides: Partial<CreateUserInput> = {}): Promise<User> {
  return createUser(latchkey.deps, {
    ...(latchkey.settings.USERNAME_TYPE === 'username' ? { username } : {}),
    email: `${username}@example.com`,
    password: ADMIN_PASSWORD,
    emailVerified: true,
    ...roles,
    ...overrides,
  });
}

/** Signs in at the admin's own login form, on to the index; the answer, for the test to judge. */
export function signInToAdmin(browser: PageClient, login: string) {
  return browser.post('/admin/login/', { username: login, password: ADMIN_PASSWORD, next: '/admin/' });
}

/**
 * POSTs a list's action form with these rows ticked (PageClient.post sends each field once; a
 * bulk action sends `_selected_action` once per row), then waits for the background work.
 */
export async function postSelected(browser: PageClient, latchkey: TestLatchkey, url: string, fields: Record<string, string>, ids: readonly number[], options: { csrf?: boolean } = {}) {
  const body = new URLSearchParams({ ...(options.csrf === false ? {} : { csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '' }), ...fields });
  for (const id of ids) body.append('_selected_action', String(id));
  const response = await browser.app.inject({
    method: 'POST',
    url,
    payload: body.toString(),
    headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
    cookies: Object.fromEntries(browser.cookies),
  });
  for (const cookie of response.cookies) browser.cookies.set(cookie.name, cookie.value);
  await latchkey.deps.background.idle();
  return response;
}
