/**
 * API tokens in the domain: DRF's key format, one key per user until deleted, nothing usable in a
 * database dump, deletion and deactivation taking effect at once, on every instance, and tokens
 * that can no longer be read back being replaced.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser, deactivateUser } from '../account/users.js';
import { ManualClock } from '../core/clock.js';
import { openLatchkey, type InternalLatchkey } from '../latchkey.js';
import { MemoryMailer } from '../mail/index.js';
import { openDatabase, type Database } from '../storage/database.js';
import type { Store } from '../store.js';
import type { User } from '../account/model.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../testing/latchkey.js';
import { deleteApiToken, isApiTokenKeyFormat, issueApiToken, userForApiToken } from './api-tokens.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

/** Every row of every table of the database's own schema, as text: what a dump would show. */
async function dumpEveryTable(database: Database): Promise<string> {
  const db = database.kysely;
  const listed =
    database.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
  const parts: string[] = [];
  for (const { name } of listed.rows) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db);
    parts.push(`${name}: ${JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}`);
  }
  return parts.join('\n');
}

/** The forms in which a key could leak into a dump. */
function encodings(key: string): string[] {
  const bytes = Buffer.from(key, 'hex');
  return [
    key,
    key.toUpperCase(),
    bytes.toString('base64'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    Buffer.from(key, 'utf8').toString('base64').replace(/=+$/, ''),
    Buffer.from(key, 'utf8').toString('base64url'),
    Buffer.from(key, 'utf8').toString('hex'),
  ];
}

/**
 * The needles found anywhere in `text`. Every window of each needle length is looked up in a set,
 * which keeps searching a large dump for thousands of needles fast.
 */
const BATCH_SIZE = 50;

/** `work` for every item, BATCH_SIZE at a time, the results in the items' order. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += BATCH_SIZE) results.push(...(await Promise.all(items.slice(start, start + BATCH_SIZE).map(work))));
  return results;
}

function foundIn(text: string, needles: string[]): string[] {
  const wanted = new Set(needles);
  const found = new Set<string>();
  for (const length of new Set(needles.map((needle) => needle.length))) {
    for (let start = 0; start + length <= text.length; start += 1) {
      const window = text.slice(start, start + length);
      if (wanted.has(window)) found.add(window);
    }
  }
  return [...found];
}

/** A store whose every use fails the test: for checks that must happen before any query. */
const UNTOUCHABLE_STORE = new Proxy({} as Store, {
  get(_target, repository) {
    return new Proxy(
      {},
      {
        get(_inner, method) {
          return () => Promise.reject(new Error(`the store was used: ${String(repository)}.${String(method)}`));
        },
      },
    );
  },
});

describe.each(testDatabaseKinds())('API tokens on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<User> {
    latchkey = await createTestLatchkey({ kind });
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }
  const events = async (user: User, name: string) => (await latchkey.deps.store.auditLog.listForUser(user.id, 1000)).filter((record) => record.event === name);

  it('issues a key of 40 lowercase hex characters, the same on every call, that finds its user', async () => {
    const ada = await setUp();
    const key = await issueApiToken(latchkey.deps, ada, client);
    expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect(isApiTokenKeyFormat(key)).toBe(true);
    expect(await issueApiToken(latchkey.deps, ada, client)).toBe(key);
    expect(await issueApiToken(latchkey.deps, ada)).toBe(key);
    expect(await userForApiToken(latchkey.deps, key)).toEqual(ada);
    // One token, one creation event (with the client that asked), and nothing secret in it.
    const created = await events(ada, 'api_token_created');
    expect(created).toEqual([expect.objectContaining({ ipAddress: client.ip, userAgent: client.userAgent, data: {} })]);
  });

  it('gives every one of ten parallel first requests the same key, and stores one token', async () => {
    const ada = await setUp();
    const keys = await Promise.all(Array.from({ length: 10 }, () => issueApiToken(latchkey.deps, ada, client)));
    expect(new Set(keys).size).toBe(1);
    expect(await userForApiToken(latchkey.deps, keys[0]!)).toEqual(ada);
    const rows = await latchkey.database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(await events(ada, 'api_token_created')).toHaveLength(1);
  });

  it('refuses a deleted key at once, and issues a different key afterwards', async () => {
    const ada = await setUp();
    const key = await issueApiToken(latchkey.deps, ada);
    expect(await deleteApiToken(latchkey.deps, ada, client)).toBe(true);
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    expect(await deleteApiToken(latchkey.deps, ada, client)).toBe(false);
    expect(await events(ada, 'api_token_deleted')).toHaveLength(1);
    const next = await issueApiToken(latchkey.deps, ada);
    expect(next).not.toBe(key);
    expect(await userForApiToken(latchkey.deps, next)).toEqual(ada);
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
  });

  it("lets user B neither obtain nor delete user A's token", async () => {
    const ada = await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const adaKey = await issueApiToken(latchkey.deps, ada);
    const bobKey = await issueApiToken(latchkey.deps, bob);
    expect(bobKey).not.toBe(adaKey);
    expect(await deleteApiToken(latchkey.deps, bob)).toBe(true);
    expect(await userForApiToken(latchkey.deps, bobKey)).toBeUndefined();
    expect(await userForApiToken(latchkey.deps, adaKey)).toEqual(ada);
    expect(await issueApiToken(latchkey.deps, bob)).not.toBe(adaKey);
  });

  it('makes the key useless at once when the user is deactivated or deleted', async () => {
    const ada = await setUp();
    const key = await issueApiToken(latchkey.deps, ada);
    await deactivateUser(latchkey.deps, ada);
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    // Deactivation deletes the token (account/users.ts): reactivating the account does not revive the key.
    await latchkey.deps.store.users.update(ada.id, { isActive: true });
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    // A token kept while the account is inactive (deactivated by a direct database change) serves
    // no one until the account is active again.
    const kept = await issueApiToken(latchkey.deps, ada);
    await latchkey.deps.store.users.update(ada.id, { isActive: false });
    expect(await userForApiToken(latchkey.deps, kept)).toBeUndefined();
    await latchkey.deps.store.users.update(ada.id, { isActive: true });
    expect(await userForApiToken(latchkey.deps, kept)).toMatchObject({ id: ada.id, isActive: true });
    await latchkey.deps.store.users.delete(ada.id);
    expect(await userForApiToken(latchkey.deps, key)).toBeUndefined();
    expect(await latchkey.database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute()).toEqual([]);
  });

  it('refuses anything that is not 40 lowercase hex characters before any query', async () => {
    const ada = await setUp();
    const key = await issueApiToken(latchkey.deps, ada);
    const malformed = [
      '',
      'Token',
      key.toUpperCase(),
      key.slice(1),
      `${key}0`,
      ` ${key}`,
      `${key}\n`,
      `${key.slice(0, 39)}g`,
      `${key.slice(0, 38)}é`,
      '０'.repeat(40),
      `' OR '1'='1' --${'a'.repeat(25)}`,
      'a'.repeat(10_000),
      `${key.slice(0, 20)}\u0000${key.slice(21)}`,
    ];
    for (const candidate of malformed) {
      expect(await userForApiToken({ settings: latchkey.settings, store: UNTOUCHABLE_STORE }, candidate), JSON.stringify(candidate.slice(0, 50))).toBeUndefined();
      expect(isApiTokenKeyFormat(candidate)).toBe(false);
    }
    // A well-formed key is looked up, and one that is nobody's finds nobody.
    await expect(userForApiToken({ settings: latchkey.settings, store: UNTOUCHABLE_STORE }, key)).rejects.toThrow(/the store was used/);
    expect(await userForApiToken(latchkey.deps, 'f'.repeat(40))).toBeUndefined();
    expect(await userForApiToken(latchkey.deps, key)).toEqual(ada);
  });

  it('makes 1,000 distinct random keys for 1,000 users, none of which a database dump contains', async () => {
    await setUp();
    const store = latchkey.deps.store;
    // In batches: a thousand queries at once outwait the pool's connection timeout on a busy machine.
    const users = await inBatches(Array.from({ length: 1000 }, (_, index) => index), (index) =>
      store.users.create({ username: `user${index}`, email: `user${index}@example.com`, password: '!unusable', dateJoined: new Date() }),
    );
    const keys = await inBatches(users, (user) => issueApiToken(latchkey.deps, user));
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect(new Set(keys).size).toBe(1000);
    // 160 bits from the CSPRNG: across 40,000 hex digits each of the 16 appears about 2,500
    // times; ±300 is over six standard deviations, so only a biased generator fails this.
    const counts = new Map<string, number>();
    for (const digit of keys.join('')) counts.set(digit, (counts.get(digit) ?? 0) + 1);
    expect(counts.size).toBe(16);
    for (const [digit, count] of counts) expect(Math.abs(count - 2500), `digit ${digit}: ${count}`).toBeLessThan(300);

    const dump = await dumpEveryTable(latchkey.database);

    const rows = await latchkey.database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute();
    expect(rows).toHaveLength(1000);
    for (const row of rows) expect(dump).toContain(row.sealed_key);
    expect(foundIn(dump, keys.flatMap(encodings))).toEqual([]);
    // (The search itself finds what is there.)
    expect(foundIn(dump, [rows[7]!.key_hash, 'no such text'])).toEqual([rows[7]!.key_hash]);
    // What the dump does hold is no key: neither the hash nor the sealed copy opens anything.
    for (const row of rows.slice(0, 20)) {
      expect(await userForApiToken(latchkey.deps, row.key_hash)).toBeUndefined();
      expect(await userForApiToken(latchkey.deps, row.sealed_key)).toBeUndefined();
    }
    // Every key still finds its own user.
    for (const index of [0, 1, 499, 998, 999]) expect((await userForApiToken(latchkey.deps, keys[index]!))?.id).toBe(users[index]!.id);
  });

  it('replaces a token sealed under a previous LATCHKEY_SECRET_KEY, and refuses the old key', async () => {
    const ada = await setUp();
    const oldKey = await issueApiToken(latchkey.deps, ada);
    const rotated = { ...latchkey.deps, settings: { ...latchkey.settings, SECRET_KEY: `${latchkey.settings.SECRET_KEY}-rotated` } };
    // Its hash was made with the old secret key: the old key finds nothing now.
    expect(await userForApiToken(rotated, oldKey)).toBeUndefined();
    const newKey = await issueApiToken(rotated, ada, client);
    expect(newKey).toMatch(/^[0-9a-f]{40}$/);
    expect(newKey).not.toBe(oldKey);
    expect(await issueApiToken(rotated, ada)).toBe(newKey);
    expect(await userForApiToken(rotated, newKey)).toEqual(ada);
    expect(await userForApiToken(rotated, oldKey)).toBeUndefined();
    expect((await events(ada, 'api_token_created')).map((record) => record.data)).toEqual([{ replaced: 'unreadable' }, {}]);
    expect(await latchkey.database.kysely.selectFrom('latchkey_api_tokens').selectAll().execute()).toHaveLength(1);
  });

  it('gives parallel requests for an unreadable token one replacement key', async () => {
    const ada = await setUp();
    await issueApiToken(latchkey.deps, ada);
    const rotated = { ...latchkey.deps, settings: { ...latchkey.settings, SECRET_KEY: `${latchkey.settings.SECRET_KEY}-rotated` } };
    const keys = await Promise.all(Array.from({ length: 16 }, () => issueApiToken(rotated, ada)));
    expect(new Set(keys).size).toBe(1);
    expect(await userForApiToken(rotated, keys[0]!)).toEqual(ada);
  });

  it("does not hand out a key whose sealed copy was moved from another user's row", async () => {
    const ada = await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const adaKey = await issueApiToken(latchkey.deps, ada);
    await issueApiToken(latchkey.deps, bob);
    const db = latchkey.database.kysely;
    // Someone able to write to the database copies Ada's row onto Bob's.
    const adaRow = await db.selectFrom('latchkey_api_tokens').selectAll().where('user_id', '=', ada.id).executeTakeFirstOrThrow();
    await db.updateTable('latchkey_api_tokens').set({ sealed_key: adaRow.sealed_key }).where('user_id', '=', bob.id).execute();
    const bobKey = await issueApiToken(latchkey.deps, bob);
    expect(bobKey).not.toBe(adaKey);
    expect(await userForApiToken(latchkey.deps, bobKey)).toEqual(bob);
    expect(await userForApiToken(latchkey.deps, adaKey)).toEqual(ada);
  });
});

describe.each(testDatabaseKinds())('API tokens across two instances on %s', (kind) => {
  const instances: InternalLatchkey[] = [];
  let database: TestDatabase | undefined;
  afterEach(async () => {
    for (const instance of instances.splice(0)) await instance.close();
    await database?.destroy();
    database = undefined;
  });

  async function twoInstances(): Promise<{ first: InternalLatchkey; second: InternalLatchkey }> {
    const settings = testSettings();
    // A file, not memory, on SQLite: a second connection must see the same database.
    database = await createTestDatabase(kind, settings.USERNAME_TYPE, { sqliteFile: true });
    const clock = new ManualClock();
    const make = (db: Database) => openLatchkey({ settings, clock, mailer: new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL }), database: db, migrations: 'require' });
    const first = await make(database);
    instances.push(first);
    const second = await make(await openDatabase(database.openOptions));
    instances.push(second);
    return { first, second };
  }

  it('refuses the key on the other instance as soon as one deletes it or deactivates the user', async () => {
    const { first, second } = await twoInstances();
    const ada = await createUser(first.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const key = await issueApiToken(first.deps, ada);
    expect(await issueApiToken(second.deps, ada)).toBe(key);
    expect(await userForApiToken(second.deps, key)).toEqual(ada);
    expect(await deleteApiToken(first.deps, ada)).toBe(true);
    expect(await userForApiToken(second.deps, key)).toBeUndefined();

    const next = await issueApiToken(second.deps, ada);
    expect(await userForApiToken(first.deps, next)).toEqual(ada);
    await deactivateUser(second.deps, ada);
    expect(await userForApiToken(first.deps, next)).toBeUndefined();
  });
});
