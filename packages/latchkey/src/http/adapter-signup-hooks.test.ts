/**
 * The adapters' signup hooks as a project overrides them (docs/extending.md, "The adapters"),
 * through the pages and the headless API, on every database: AccountAdapter.populateUsername
 * (allauth's populate_username).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AccountAdapter, type NewUserFields } from '../account/adapter.js';
import type { UsernameTaken } from '../account/usernames.js';
import { testDatabaseKinds } from '../testing/database.js';
import { dummyProviders, throughDummy, type DummyAnswer } from '../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey, type TestLatchkeyOptions } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';

const ADA: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' };

/** Usernames from the person's name (`ada.lovelace`), Latchkey's own when that is taken; one name it cannot store. */
class NamingAdapter extends AccountAdapter {
  override async populateUsername(user: NewUserFields, isTaken: UsernameTaken): Promise<string> {
    if (user.name === 'Nobody') return 'no spaces allowed';
    const fromName = user.name.toLowerCase().replaceAll(' ', '.');
    return fromName !== '' && !(await isTaken(fromName)) ? fromName : super.populateUsername(user, isTaken);
  }
}

describe.each(testDatabaseKinds())("the adapters' signup hooks, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(options: Partial<TestLatchkeyOptions> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, adapter: (settings) => new NamingAdapter(settings), ...options });
    browser = await PageClient.create(latchkey, { plugin: { headless: true } });
  }

  it("populateUsername: a person signed up at once through a provider gets the project's username, or the form when it cannot be stored", async () => {
    await setUp({ settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() } });
    await throughDummy(browser, ADA);
    expect((await latchkey.users.findByEmail('ada@example.com'))?.username).toBe('ada.lovelace');

    // Taken: the override falls back to Latchkey's own (the address's local part).
    await throughDummy(browser.another(), { id: 'ada-2', email: 'countess@example.com', email_verified: 'true', name: 'Ada Lovelace' });
    expect((await latchkey.users.findByEmail('countess@example.com'))?.username).toBe('countess');

    // Not a username Latchkey can store: the signup form asks the person, nothing is created.
    const nobody = browser.another();
    expect((await throughDummy(nobody, { id: 'nobody', email: 'nobody@example.com', email_verified: 'true', name: 'Nobody' })).headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.users.findByEmail('nobody@example.com')).toBeUndefined();
  });
});
