import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import type { TestDatabase } from '../database.js';
import type { ApiToken } from '../../tokens/model.js';
import { createUser, expectLatchkeyError, expectNoDriverDetails, useFreshDatabase, type ConformanceTarget } from './harness.js';

const CREATED = new Date('2030-01-01T00:00:00.123Z');

/**
 * Resolves once a statement touching `table` waits for a lock on PostgreSQL, or after a few
 * seconds. On SQLite there is nothing to wait for: a second transaction waits for the first as a
 * whole.
 */
async function waitForLockedStatements(database: TestDatabase, table: string): Promise<void> {
  if (database.dialect !== 'postgres') return;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ waiting: string }>`
      select count(*) as waiting from pg_stat_activity
      where pid <> pg_backend_pid() and wait_event_type = 'Lock' and query like ${`%${table}%`}`.execute(database.kysely);
    if (Number(rows[0]?.waiting) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function apiToken(userId: number, label: string, overrides: Partial<ApiToken> = {}): ApiToken {
  return { userId, keyHash: `hash-${label}`, sealedKey: `v1.sealed-${label}`, createdAt: CREATED, ...overrides };
}

export function describeApiTokenRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('ApiTokenRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const apiTokens = () => database().store.apiTokens;

    async function rowCount(): Promise<number> {
      const { rows } = await sql<{ count: number | string | bigint }>`select count(*) as count from latchkey_api_tokens`.execute(database().kysely);
      return Number(rows[0]?.count);
    }

    it('searches a page of tokens for the admin by user, newest user first, without the key in any form', async () => {
      const jane = await createUser(store(), usernameType, 'jane', { email: 'jane@example.com' });
      const odd = await createUser(store(), usernameType, 'a_b', { email: 'a_b@example.org' });
      const none = await createUser(store(), usernameType, 'none');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'jane'));
      await apiTokens().createIfAbsent(apiToken(odd.id, 'odd', { createdAt: new Date('2030-01-02T00:00:00.000Z') }));
      const users = (listed: { userId: number }[]) => listed.map((token) => token.userId);
      const search = (query: Partial<Parameters<ReturnType<typeof apiTokens>['search']>[0]> = {}) => apiTokens().search({ limit: 10, ...query });

      const all = await search();
      expect(all).toEqual([
        { userId: odd.id, createdAt: new Date('2030-01-02T00:00:00.000Z'), user: { id: odd.id, username: usernameType === 'username' ? 'a_b' : null, email: 'a_b@example.org' } },
        { userId: jane.id, createdAt: CREATED, user: { id: jane.id, username: usernameType === 'username' ? 'jane' : null, email: 'jane@example.com' } },
      ]);
      expect(JSON.stringify(all)).not.toMatch(/hash-|sealed-/);
      expect(users(await search({ limit: 1 }))).toEqual([odd.id]);
      expect(users(await search({ limit: 1, afterUserId: odd.id }))).toEqual([jane.id]);
      expect(users(await search({ text: 'JANE@' }))).toEqual([jane.id]);
      expect(users(await search({ text: 'a_' }))).toEqual([odd.id]);
      expect(users(await search({ text: '%' }))).toEqual([]);
      expect(users(await search({ text: none.email }))).toEqual([]);
    });

    it('stores a token and finds it by user and by key hash, intact', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const token = apiToken(jane.id, 'jane');
      expect(await apiTokens().createIfAbsent(token)).toEqual(token);
      expect(await apiTokens().findForUser(jane.id)).toEqual(token);
      expect(await apiTokens().findByKeyHash('hash-jane')).toEqual(token);
      expect(await apiTokens().findByKeyHash('HASH-JANE')).toBeUndefined();
      expect(await apiTokens().findByKeyHash('hash-')).toBeUndefined();
      expect(await apiTokens().findForUser(jane.id + 1000)).toBeUndefined();
    });

    it('finds the owner of a key hash in one lookup, as the users repository reads them', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const bob = await createUser(store(), usernameType, 'bob');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'jane'));
      await apiTokens().createIfAbsent(apiToken(bob.id, 'bob'));
      expect(await apiTokens().findUserByKeyHash('hash-jane')).toEqual(await store().users.findById(jane.id));
      expect(await apiTokens().findUserByKeyHash('hash-bob')).toEqual(await store().users.findById(bob.id));
      expect(await apiTokens().findUserByKeyHash('hash-nobody')).toBeUndefined();
      await apiTokens().deleteForUser(jane.id);
      expect(await apiTokens().findUserByKeyHash('hash-jane')).toBeUndefined();
    });

    it('never reads what a transaction under way has not committed: a deletion later rolled back never hides the token', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'jane'));
      let deleted!: () => void;
      let rollBack!: () => void;
      const deletion = new Promise<void>((resolve) => (deleted = resolve));
      const rollBackNow = new Promise<void>((resolve) => (rollBack = resolve));
      const transaction = store()
        .transaction(async (repositories) => {
          await repositories.apiTokens.deleteForUser(jane.id);
          deleted();
          await rollBackNow;
          throw new Error('rolled back');
        })
        .catch((error: Error) => error.message);
      await deletion;
      // Asked while the deletion is written but not committed (SQLite: on the very connection that holds it).
      const owner = apiTokens().findUserByKeyHash('hash-jane');
      rollBack();
      expect((await owner)?.id).toBe(jane.id);
      expect(await transaction).toBe('rolled back');
      expect((await apiTokens().findUserByKeyHash('hash-jane'))?.id).toBe(jane.id);
    });

    it("keeps the user's one token: a second creation returns the first, unchanged", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const first = await apiTokens().createIfAbsent(apiToken(jane.id, 'first'));
      expect(await apiTokens().createIfAbsent(apiToken(jane.id, 'second', { createdAt: new Date('2031-01-01T00:00:00.000Z') }))).toEqual(first);
      expect(await apiTokens().findByKeyHash('hash-second')).toBeUndefined();
      expect(await rowCount()).toBe(1);
    });

    it('lets twenty parallel creations for one user leave one token, which every one of them returns', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const results = await Promise.all(Array.from({ length: 20 }, (_, index) => apiTokens().createIfAbsent(apiToken(jane.id, `attempt-${index}`))));
      const stored = await apiTokens().findForUser(jane.id);
      expect(stored).toBeDefined();
      for (const result of results) expect(result).toEqual(stored);
      expect(await rowCount()).toBe(1);
    });

    it("deletes the user's token once, leaving other users' tokens alone", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'jane'));
      const johns = await apiTokens().createIfAbsent(apiToken(john.id, 'john'));
      expect(await apiTokens().deleteForUser(jane.id)).toBe(true);
      expect(await apiTokens().deleteForUser(jane.id)).toBe(false);
      expect(await apiTokens().findForUser(jane.id)).toBeUndefined();
      expect(await apiTokens().findByKeyHash('hash-jane')).toBeUndefined();
      expect(await apiTokens().findByKeyHash('hash-john')).toEqual(johns);
      // After a deletion the user can have a new token.
      expect(await apiTokens().createIfAbsent(apiToken(jane.id, 'jane-again'))).toEqual(apiToken(jane.id, 'jane-again'));
    });

    it('deletes the token with its user', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'jane'));
      await apiTokens().createIfAbsent(apiToken(john.id, 'john'));
      expect(await store().users.delete(jane.id)).toBe(true);
      expect(await apiTokens().findByKeyHash('hash-jane')).toBeUndefined();
      expect(await apiTokens().findForUser(jane.id)).toBeUndefined();
      expect(await rowCount()).toBe(1);
    });

    it('refuses a token for a user who does not exist', async () => {
      await expectLatchkeyError(apiTokens().createIfAbsent(apiToken(999_999, 'orphan')), 'not_found');
      expect(await rowCount()).toBe(0);
    });

    it("refuses a key hash that another user's token has, without driver details", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const janes = await apiTokens().createIfAbsent(apiToken(jane.id, 'shared'));
      const error = await apiTokens()
        .createIfAbsent(apiToken(john.id, 'shared'))
        .then(
          () => undefined,
          (reason: unknown) => reason,
        );
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).not.toMatch(/latchkey_|constraint|UNIQUE|SQLITE|duplicate key|violates/i);
      expect(await apiTokens().findForUser(john.id)).toBeUndefined();
      expect(await apiTokens().findByKeyHash('hash-shared')).toEqual(janes);
    });

    it('replaces a token in a transaction, and a rollback keeps the old one', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'old'));
      const replaced = await store().transaction(async (repositories) => {
        expect(await repositories.apiTokens.deleteForUser(jane.id)).toBe(true);
        return repositories.apiTokens.createIfAbsent(apiToken(jane.id, 'new'));
      });
      expect(replaced).toEqual(apiToken(jane.id, 'new'));
      expect(await apiTokens().findForUser(jane.id)).toEqual(replaced);

      const failure = await store()
        .transaction(async (repositories) => {
          await repositories.apiTokens.deleteForUser(jane.id);
          await repositories.apiTokens.createIfAbsent(apiToken(jane.id, 'newer'));
          throw new Error('changed my mind');
        })
        .catch((reason: unknown) => reason);
      expect((failure as Error).message).toBe('changed my mind');
      expect(await apiTokens().findForUser(jane.id)).toEqual(replaced);
    });

    it('lets a transaction catch the refusal for a missing user and go on', async () => {
      // On PostgreSQL a failed statement would abort the transaction; the savepoint around the
      // insert keeps it usable, as on SQLite.
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await store().transaction(async (repositories) => {
        const refusal = await repositories.apiTokens.createIfAbsent(apiToken(999_999, 'orphan')).catch((reason: unknown) => reason);
        if (!isLatchkeyError(refusal, 'not_found')) throw new Error(`expected 'not_found', got ${String(refusal)}`);
        expectNoDriverDetails(refusal);
        return repositories.apiTokens.createIfAbsent(apiToken(jane.id, 'jane'));
      });
      expect(await apiTokens().findForUser(jane.id)).toEqual(created);
    });

    it('lets parallel replacements (delete, then create, each in a transaction) leave exactly one token, one of theirs', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      await apiTokens().createIfAbsent(apiToken(jane.id, 'old'));
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          store().transaction(async (repositories) => {
            await repositories.apiTokens.deleteForUser(jane.id);
            return repositories.apiTokens.createIfAbsent(apiToken(jane.id, `replacement-${index}`));
          }),
        ),
      );
      const stored = await apiTokens().findForUser(jane.id);
      expect(stored?.keyHash).toMatch(/^hash-replacement-/);
      // The replacement that committed last is what stays.
      expect(results.map((result) => result.keyHash)).toContain(stored?.keyHash);
      expect(await rowCount()).toBe(1);
    });

    it('holds the token createIfAbsent returns in a transaction: a parallel "replace it if it is still the old one" waits, then finds the replacement', async () => {
      // What tokens/api-tokens.ts does with a token it can no longer read. Without the hold, a
      // transaction that saw the old token could delete a replacement another one has just
      // committed, and two logins would end with different keys, one of them already deleted.
      const jane = await createUser(store(), usernameType, 'jane');
      const old = await apiTokens().createIfAbsent(apiToken(jane.id, 'old'));
      const replace = (label: string, pause: { read: () => void; gate: Promise<void> } | undefined) =>
        store().transaction(async (repositories) => {
          const replacement = apiToken(jane.id, label);
          const current = await repositories.apiTokens.createIfAbsent(replacement);
          pause?.read();
          await pause?.gate;
          if (current.keyHash !== old.keyHash) return current;
          await repositories.apiTokens.deleteForUser(jane.id);
          return repositories.apiTokens.createIfAbsent(replacement);
        });
      // The first replacement reads the old token, then pauses; the second runs meanwhile, and
      // either finishes (nothing held) or waits for the first's hold, which is then let go.
      let read!: () => void;
      const hasRead = new Promise<void>((resolve) => (read = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const first = replace('first', { read, gate });
      await hasRead;
      const second = replace('second', undefined);
      await Promise.race([second, waitForLockedStatements(database(), 'latchkey_api_tokens')]);
      release();
      const [firstResult, secondResult] = await Promise.all([first, second]);
      expect(firstResult.keyHash).toBe('hash-first');
      expect(secondResult).toEqual(firstResult);
      expect(await apiTokens().findForUser(jane.id)).toEqual(firstResult);
      expect(await rowCount()).toBe(1);
    });
  });
}
