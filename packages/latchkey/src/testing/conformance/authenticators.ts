import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import type { TestDatabase } from '../database.js';
import type { NewAuthenticator } from '../../mfa/model.js';
import { createUser, expectLatchkeyError, newUser, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';

const CREATED = new Date('2030-01-01T00:00:00.000Z');
const USED = new Date('2030-01-02T03:04:05.678Z');

function newAuthenticator(userId: number, overrides: Partial<NewAuthenticator> = {}): NewAuthenticator {
  return {
    userId,
    type: 'totp',
    data: { secret: 'v1:encrypted-secret', nested: { digits: 6, period: 30 }, note: 'Zoë ✓' },
    createdAt: CREATED,
    ...overrides,
  };
}

/**
 * Resolves once `count` statements touching the recovery-code table wait for a lock on PostgreSQL
 * (false if that has not happened within a few seconds). On SQLite there is nothing to wait for.
 */
async function waitForLockedStatements(database: TestDatabase, count: number): Promise<boolean> {
  if (database.dialect !== 'postgres') return true;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ waiting: string }>`
      select count(*) as waiting from pg_stat_activity
      where pid <> pg_backend_pid() and wait_event_type = 'Lock' and query like '%latchkey_recovery_code_uses%'`.execute(database.kysely);
    if (Number(rows[0]?.waiting) >= count) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

export function describeAuthenticatorRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('AuthenticatorRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const authenticators = () => database().store.authenticators;

    it('creates an authenticator and finds it by id and by user and type, with its data intact', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await authenticators().create(newAuthenticator(jane.id));
      expect(typeof created.id).toBe('number');
      expect(created).toEqual({ id: created.id, ...newAuthenticator(jane.id), credentialId: null, lastUsedAt: null });
      expect(await authenticators().findById(created.id)).toEqual(created);
      expect(await authenticators().findById(created.id + 1000)).toBeUndefined();
      expect(await authenticators().findForUser(jane.id, 'totp')).toEqual(created);
      expect(await authenticators().findForUser(jane.id, 'recovery_codes')).toBeUndefined();
      expect(await authenticators().findForUser(jane.id + 1000, 'totp')).toBeUndefined();
    });

    it('keeps several WebAuthn keys per user, finds each by its credential id, updates their data, and refuses a credential registered twice', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const key = (userId: number, credentialId: string) => ({ userId, type: 'webauthn' as const, data: { name: credentialId }, credentialId, createdAt: new Date('2026-01-01T00:00:00Z') });
      const first = await authenticators().create(key(jane.id, 'cred-a'));
      const second = await authenticators().create(key(jane.id, 'cred-b'));
      expect(first.credentialId).toBe('cred-a');
      expect((await authenticators().listForUser(jane.id)).map((authenticator) => authenticator.id)).toEqual([first.id, second.id]);
      await expect(authenticators().create(key(john.id, 'cred-a'))).rejects.toMatchObject({ code: 'authenticator_exists' });
      expect(await authenticators().listForUser(john.id)).toEqual([]);
      expect(await authenticators().findByCredentialId('cred-b')).toEqual(second);
      expect(await authenticators().updateData(second.id, { name: 'Laptop', sign_count: 7 })).toBe(true);
      expect(await authenticators().findByCredentialId('cred-b')).toMatchObject({ id: second.id, data: { name: 'Laptop', sign_count: 7 } });
      expect(await authenticators().updateData(second.id + 1000, {})).toBe(false);
    });

    it("lists a user's authenticators oldest first, and no one else's", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes', data: { seed: 'x' }, createdAt: new Date('2030-01-01T00:00:01.000Z') }));
      const totp = await authenticators().create(newAuthenticator(jane.id, { createdAt: CREATED }));
      await authenticators().create(newAuthenticator(john.id));
      expect(await authenticators().listForUser(jane.id)).toEqual([totp, codes]);
      expect(await authenticators().listForUser(jane.id + 1000)).toEqual([]);
    });

    it('searches a page of authenticators for the admin, newest first, by type, user and the start of a login, without their data', async () => {
      const jane = await createUser(store(), usernameType, 'jane', { email: 'jane@example.com' });
      const odd = await createUser(store(), usernameType, 'a_b', { email: 'a_b@example.org' });
      const janeApp = await authenticators().create(newAuthenticator(jane.id));
      const janeCodes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      const oddApp = await authenticators().create(newAuthenticator(odd.id));
      await authenticators().markUsed(oddApp.id, USED);
      const ids = (listed: { id: number }[]) => listed.map((authenticator) => authenticator.id);
      const search = (query: Partial<Parameters<ReturnType<typeof authenticators>['search']>[0]> = {}) => authenticators().search({ limit: 10, ...query });

      const all = await search();
      expect(ids(all)).toEqual([oddApp.id, janeCodes.id, janeApp.id]);
      expect(all[0]).toEqual({
        id: oddApp.id,
        userId: odd.id,
        type: 'totp',
        createdAt: CREATED,
        lastUsedAt: USED,
        user: { id: odd.id, username: usernameType === 'username' ? 'a_b' : null, email: 'a_b@example.org' },
      });
      expect(all[0]).not.toHaveProperty('data');
      expect(ids(await search({ type: 'totp' }))).toEqual([oddApp.id, janeApp.id]);
      expect(ids(await search({ type: 'recovery_codes', userId: jane.id }))).toEqual([janeCodes.id]);
      expect(ids(await search({ userId: 999_999 }))).toEqual([]);
      expect(ids(await search({ limit: 2 }))).toEqual([oddApp.id, janeCodes.id]);
      expect(ids(await search({ limit: 2, afterId: janeCodes.id }))).toEqual([janeApp.id]);
      // The start of the address in any case, or of the username; LIKE's wildcards are only themselves.
      expect(ids(await search({ text: 'JANE@' }))).toEqual([janeCodes.id, janeApp.id]);
      expect(ids(await search({ text: 'a_' }))).toEqual([oddApp.id]);
      expect(ids(await search({ text: '_' }))).toEqual([]);
      expect(ids(await search({ text: '%' }))).toEqual([]);
    });

    it('records a use, and reports an unknown authenticator', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const created = await authenticators().create(newAuthenticator(jane.id));
      expect(await authenticators().markUsed(created.id, USED)).toBe(true);
      expect(await authenticators().findById(created.id)).toEqual({ ...created, lastUsedAt: USED });
      expect(await authenticators().markUsed(created.id + 1000, USED)).toBe(false);
    });

    it('deletes an authenticator once, with its spent recovery codes', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      const totp = await authenticators().create(newAuthenticator(jane.id));
      expect(await authenticators().useRecoveryCode(codes.id, 3, USED)).toBe(true);
      expect(await authenticators().delete(codes.id)).toBe(true);
      expect(await authenticators().delete(codes.id)).toBe(false);
      expect(await authenticators().findById(codes.id)).toBeUndefined();
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([]);
      const rows = await database().kysely.selectFrom('latchkey_recovery_code_uses').selectAll().execute();
      expect(rows).toEqual([]);
      expect(await authenticators().listForUser(jane.id)).toEqual([totp]);
    });

    it('refuses a second authenticator of one type for one user, but not of another type or user', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const first = await authenticators().create(newAuthenticator(jane.id));
      await expectLatchkeyError(authenticators().create(newAuthenticator(jane.id, { data: { secret: 'other' } })), 'authenticator_exists');
      expect(await authenticators().findForUser(jane.id, 'totp')).toEqual(first);
      await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      await authenticators().create(newAuthenticator(john.id));
      expect(await authenticators().listForUser(jane.id)).toHaveLength(2);
    });

    it('lets exactly one of ten parallel activations of one type succeed', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const { values, codes } = await settleAll(
        Array.from({ length: 10 }, (_, index) => authenticators().create(newAuthenticator(jane.id, { data: { attempt: index } }))),
      );
      expect(values).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: 9 }, () => 'authenticator_exists'));
      expect(await authenticators().listForUser(jane.id)).toEqual(values);
    });

    it('refuses an authenticator for a user who does not exist', async () => {
      await expectLatchkeyError(authenticators().create(newAuthenticator(999_999)), 'not_found');
      expect(await authenticators().listForUser(999_999)).toEqual([]);
    });

    it('lets a transaction catch either refusal and go on', async () => {
      // On PostgreSQL a failed statement would abort the transaction; the savepoint around the
      // insert keeps it usable, as on SQLite.
      const jane = await createUser(store(), usernameType, 'jane');
      await authenticators().create(newAuthenticator(jane.id));
      const created = await store().transaction(async (repositories) => {
        for (const [input, code] of [
          [newAuthenticator(jane.id), 'authenticator_exists'],
          [newAuthenticator(999_999), 'not_found'],
        ] as const) {
          const refusal = await repositories.authenticators.create(input).catch((reason: unknown) => reason);
          if (!isLatchkeyError(refusal, code)) throw new Error(`expected '${code}', got ${String(refusal)}`);
        }
        return repositories.authenticators.create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      });
      expect(await authenticators().findById(created.id)).toEqual(created);
    });

    it("removes a user's authenticators and spent codes when the user is deleted", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const john = await createUser(store(), usernameType, 'john');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      await authenticators().create(newAuthenticator(jane.id));
      const johns = await authenticators().create(newAuthenticator(john.id, { type: 'recovery_codes' }));
      await authenticators().useRecoveryCode(codes.id, 0, USED);
      await authenticators().useRecoveryCode(johns.id, 0, USED);
      await store().users.delete(jane.id);
      expect(await authenticators().listForUser(jane.id)).toEqual([]);
      expect(await authenticators().findById(codes.id)).toBeUndefined();
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([]);
      expect(await authenticators().usedRecoveryCodes(johns.id)).toEqual([0]);
    });

    it('spends each recovery code once, and lists the spent ones ascending', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      const other = await authenticators().create(newAuthenticator((await createUser(store(), usernameType, 'john')).id, { type: 'recovery_codes' }));
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([]);
      expect(await authenticators().useRecoveryCode(codes.id, 7, USED)).toBe(true);
      expect(await authenticators().useRecoveryCode(codes.id, 7, USED)).toBe(false);
      expect(await authenticators().useRecoveryCode(codes.id, 2, USED)).toBe(true);
      expect(await authenticators().useRecoveryCode(codes.id, 0, USED)).toBe(true);
      expect(await authenticators().useRecoveryCode(other.id, 7, USED)).toBe(true);
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([0, 2, 7]);
      expect(await authenticators().usedRecoveryCodes(other.id)).toEqual([7]);
      expect(await authenticators().usedRecoveryCodes(codes.id + 1000)).toEqual([]);
    });

    it('lets exactly one of twenty parallel uses of one recovery code succeed', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      const { values, codes: refusals } = await settleAll(Array.from({ length: 20 }, () => authenticators().useRecoveryCode(codes.id, 4, USED)));
      expect(refusals).toEqual([]);
      expect(values.filter((used) => used)).toHaveLength(1);
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([4]);
    });

    it('refuses a recovery code of a deleted authenticator without an error, also inside a transaction that then commits', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      await authenticators().delete(codes.id);
      expect(await authenticators().useRecoveryCode(codes.id, 0, USED)).toBe(false);
      expect(await authenticators().useRecoveryCode(999_999, 0, USED)).toBe(false);
      const used = await store().transaction(async (repositories) => {
        const outcome = await repositories.authenticators.useRecoveryCode(codes.id, 1, USED);
        await repositories.users.update(jane.id, { name: 'Jane Doe' });
        return outcome;
      });
      expect(used).toBe(false);
      expect((await store().users.findById(jane.id))?.name).toBe('Jane Doe');
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([]);
    });

    it('refuses a recovery code whose authenticator is deleted while the use waits for it, without breaking the transaction', async () => {
      // On PostgreSQL both uses see the authenticator (its deletion is not committed yet) and then
      // wait for its row lock; once the deletion commits, the foreign key refuses them. That
      // refusal must come back as false, and the waiting transaction must still commit. On SQLite
      // the uses run after the deletion and simply find no authenticator.
      const jane = await createUser(store(), usernameType, 'jane');
      const codes = await authenticators().create(newAuthenticator(jane.id, { type: 'recovery_codes' }));
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let started: () => void = () => undefined;
      const deleted = new Promise<void>((resolve) => (started = resolve));
      const deletion = store().transaction(async (repositories) => {
        await repositories.authenticators.delete(codes.id);
        started();
        await held;
      });
      await deleted;
      const outside = authenticators().useRecoveryCode(codes.id, 0, USED);
      const inside = store().transaction(async (repositories) => {
        const outcome = await repositories.authenticators.useRecoveryCode(codes.id, 1, USED);
        await repositories.users.create(newUser(usernameType, 'john'));
        return outcome;
      });
      expect(await waitForLockedStatements(database(), 2)).toBe(true);
      release();
      await deletion;
      expect(await outside).toBe(false);
      expect(await inside).toBe(false);
      expect(await store().users.count()).toBe(2);
      expect(await authenticators().usedRecoveryCodes(codes.id)).toEqual([]);
    });
  });
}
