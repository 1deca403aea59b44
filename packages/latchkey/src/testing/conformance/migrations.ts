import { NO_MIGRATIONS, sql, type Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { createDatabaseOneTimeClaimStore } from '../../storage/kysely/one-time-claim-store.js';
import { createTestDatabase } from '../database.js';
import { openDatabase } from '../../storage/database.js';
import type { DatabaseSchema } from '../../storage/kysely/schema.js';
import { createMigrator, latchkeyMigrations } from '../../storage/migrations/index.js';
import type { UserSearch } from '../../account/ports.js';
import type { Store } from '../../store.js';
import type { UsernameType } from '../../config/settings.js';
import type { ConformanceTarget } from './harness.js';

/**
 * Data written with the schema as each migration left it, in plain SQL (not through the current
 * repositories, which follow the latest schema), and what the latest code must read back. Every
 * new migration adds an entry, so that the upgrade test proves data written before it survives.
 */
interface MigrationFixture {
  seed(db: Kysely<unknown>, usernameType: UsernameType): Promise<void>;
  /** `db` is the upgraded database, for the tables no repository reads. */
  verify(store: Store, usernameType: UsernameType, db: Kysely<DatabaseSchema>): Promise<void>;
}

async function insertRow(db: Kysely<unknown>, table: string, row: Record<string, unknown>): Promise<number | undefined> {
  const columns = Object.keys(row);
  const result = await sql<{ id?: number }>`insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))}) values (${sql.join(
    columns.map((column) => row[column]),
  )}) returning *`.execute(db);
  return result.rows[0]?.id;
}

const FIXTURES: Record<string, MigrationFixture> = {
  '0001_initial': {
    async seed(db, usernameType) {
      const userId = await insertRow(db, 'latchkey_users', {
        ...(usernameType === 'username' ? { username: 'Legacy', username_key: 'legacy' } : {}),
        email: 'legacy@example.com',
        name: 'Legacy User',
        password: 'pbkdf2_sha256$870000$salt$hash',
        is_active: 1,
        is_staff: 1,
        is_superuser: 0,
        date_joined: '2020-01-02T03:04:05.678Z',
        last_login: '2021-01-02T03:04:05.678Z',
      });
      await insertRow(db, 'latchkey_email_addresses', { user_id: userId, email: 'legacy@example.com', verified: 1, is_primary: 1 });
      await insertRow(db, 'latchkey_sessions', {
        id_hash: 'legacy-session',
        user_id: userId,
        data: '{"legacy":true}',
        created_at: '2021-01-02T03:04:05.678Z',
        last_seen_at: '2021-01-02T03:04:05.678Z',
        expires_at: '2031-01-02T03:04:05.678Z',
        ip_address: '127.0.0.1',
        user_agent: 'legacy',
      });
    },
    async verify(store, usernameType) {
      const user = await store.users.findByEmail('legacy@example.com');
      expect(user).toMatchObject({
        username: usernameType === 'username' ? 'Legacy' : null,
        name: 'Legacy User',
        isActive: true,
        isStaff: true,
        isSuperuser: false,
        dateJoined: new Date('2020-01-02T03:04:05.678Z'),
        lastLogin: new Date('2021-01-02T03:04:05.678Z'),
      });
      if (usernameType === 'username') expect(await store.users.findByUsername('LEGACY')).toEqual(user);
      expect(await store.emailAddresses.findVerified('legacy@example.com')).toMatchObject({ userId: user!.id, primary: true });
      // The session lives on with its user (its plain data is dropped by 0011_sealed_session_data).
      expect(await store.sessions.find('legacy-session')).toMatchObject({ userId: user!.id });
    },
  },
  '0002_audit_and_rate_limits': {
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      await insertRow(db, 'latchkey_audit_log', {
        event: 'user_logged_in',
        user_id: user.rows[0]?.id,
        created_at: '2022-01-02T03:04:05.678Z',
        ip_address: '192.0.2.1',
        user_agent: 'legacy',
        data: '{"method":"password"}',
      });
    },
    async verify(store) {
      const user = await store.users.findByEmail('legacy@example.com');
      expect(await store.auditLog.listForUser(user!.id)).toEqual([
        expect.objectContaining({ event: 'user_logged_in', createdAt: new Date('2022-01-02T03:04:05.678Z'), data: { method: 'password' } }),
      ]);
    },
  },
  '0003_mfa': {
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      const userId = user.rows[0]?.id;
      await insertRow(db, 'latchkey_authenticators', {
        user_id: userId,
        type: 'totp',
        data: '{"secret":"v1:legacy"}',
        created_at: '2023-01-02T03:04:05.678Z',
        last_used_at: '2023-02-02T03:04:05.678Z',
      });
      const codesId = await insertRow(db, 'latchkey_authenticators', {
        user_id: userId,
        type: 'recovery_codes',
        data: '{"seed":"v1:legacy"}',
        created_at: '2023-01-02T03:04:05.678Z',
        last_used_at: null,
      });
      await insertRow(db, 'latchkey_recovery_code_uses', { authenticator_id: codesId, code_index: 9, used_at: '2023-03-02T03:04:05.678Z' });
      await insertRow(db, 'latchkey_recovery_code_uses', { authenticator_id: codesId, code_index: 2, used_at: '2023-03-02T03:04:05.678Z' });
      await insertRow(db, 'latchkey_one_time_claims', { key: 'legacy-claim', expires_at: '2031-01-02T03:04:05.678Z' });
    },
    async verify(store, _usernameType, db) {
      const user = await store.users.findByEmail('legacy@example.com');
      const [totp, codes] = await store.authenticators.listForUser(user!.id);
      expect(totp).toMatchObject({
        userId: user!.id,
        type: 'totp',
        data: { secret: 'v1:legacy' },
        createdAt: new Date('2023-01-02T03:04:05.678Z'),
        lastUsedAt: new Date('2023-02-02T03:04:05.678Z'),
      });
      expect(codes).toMatchObject({ type: 'recovery_codes', data: { seed: 'v1:legacy' }, lastUsedAt: null });
      expect(await store.authenticators.usedRecoveryCodes(codes!.id)).toEqual([2, 9]);
      expect(await store.authenticators.useRecoveryCode(codes!.id, 9, new Date())).toBe(false);
      // The claim still holds until its expiry, and no longer.
      const claims = createDatabaseOneTimeClaimStore(db);
      expect(await claims.claim('legacy-claim', 30, new Date('2031-01-02T03:04:05.677Z'))).toBe(false);
      expect(await claims.claim('legacy-claim', 30, new Date('2031-01-02T03:04:05.678Z'))).toBe(true);
    },
  },
  '0004_api_tokens': {
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      await insertRow(db, 'latchkey_api_tokens', {
        user_id: user.rows[0]?.id,
        key_hash: 'legacy-key-hash',
        sealed_key: 'v1.legacy-sealed-key',
        created_at: '2024-01-02T03:04:05.678Z',
      });
    },
    async verify(store) {
      const user = await store.users.findByEmail('legacy@example.com');
      const token = { userId: user!.id, keyHash: 'legacy-key-hash', sealedKey: 'v1.legacy-sealed-key', createdAt: new Date('2024-01-02T03:04:05.678Z') };
      expect(await store.apiTokens.findByKeyHash('legacy-key-hash')).toEqual(token);
      // Still the user's one token.
      expect(await store.apiTokens.createIfAbsent({ ...token, keyHash: 'another', sealedKey: 'v1.another', createdAt: new Date() })).toEqual(token);
    },
  },
  '0005_socialaccount': {
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      // The columns with defaults are left out, as an older writer might have.
      const appId = await insertRow(db, 'latchkey_social_apps', { provider: 'github', name: 'Legacy GitHub', client_id: 'legacy-client' });
      const accountId = await insertRow(db, 'latchkey_social_accounts', {
        user_id: user.rows[0]?.id,
        provider: 'github',
        uid: 'legacy-uid',
        extra_data: '{"login":"legacy"}',
        date_joined: '2025-01-02T03:04:05.678Z',
        last_login: '2025-02-02T03:04:05.678Z',
      });
      await insertRow(db, 'latchkey_social_tokens', { account_id: accountId, app_id: appId, sealed_token: 'v1.legacy-access', expires_at: '2025-03-02T03:04:05.678Z' });
      await insertRow(db, 'latchkey_social_tokens', { account_id: accountId, app_id: null, sealed_token: 'v1.legacy-settings', sealed_token_secret: 'v1.legacy-refresh', expires_at: null });
    },
    async verify(store) {
      const user = await store.users.findByEmail('legacy@example.com');
      const [app] = await store.socialApps.list();
      expect(app).toEqual({ id: app!.id, provider: 'github', providerId: '', name: 'Legacy GitHub', clientId: 'legacy-client', sealedSecret: '', key: '', settings: {} });
      const account = await store.socialAccounts.find('github', 'legacy-uid');
      expect(account).toEqual({
        id: account!.id,
        userId: user!.id,
        provider: 'github',
        uid: 'legacy-uid',
        extraData: { login: 'legacy' },
        dateJoined: new Date('2025-01-02T03:04:05.678Z'),
        lastLogin: new Date('2025-02-02T03:04:05.678Z'),
      });
      const tokens = await store.socialTokens.listForAccount(account!.id);
      expect(tokens).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ appId: app!.id, sealedToken: 'v1.legacy-access', sealedTokenSecret: '', expiresAt: new Date('2025-03-02T03:04:05.678Z') }),
          expect.objectContaining({ appId: null, sealedToken: 'v1.legacy-settings', sealedTokenSecret: 'v1.legacy-refresh', expiresAt: null }),
        ]),
      );
      // Still one token per account and app: a new one for the settings' app replaces the old.
      await store.socialTokens.save({ accountId: account!.id, appId: null, sealedToken: 'v1.new', sealedTokenSecret: '', expiresAt: null });
      expect(await store.socialTokens.listForAccount(account!.id)).toHaveLength(2);
      await expect(store.socialAccounts.create({ ...account!, userId: user!.id })).rejects.toMatchObject({ code: 'social_account_exists' });
    },
  },
  '0006_admin_permissions': {
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      await insertRow(db, 'latchkey_admin_permissions', { user_id: user.rows[0]?.id, model: 'users.user', action: 'change' });
      await insertRow(db, 'latchkey_admin_permissions', { user_id: user.rows[0]?.id, model: 'account.emailaddress', action: 'view' });
    },
    async verify(store) {
      const user = await store.users.findByEmail('legacy@example.com');
      expect(await store.adminPermissions.listForUser(user!.id)).toEqual([
        { model: 'users.user', action: 'change' },
        { model: 'account.emailaddress', action: 'view' },
      ]);
    },
  },
  '0007_admin_indexes': {
    // Indexes only: the admin's search and filters find the rows written before them.
    async seed(db, usernameType) {
      await insertRow(db, 'latchkey_users', {
        ...(usernameType === 'username' ? { username: 'Indexed', username_key: 'indexed' } : {}),
        email: 'Indexed.Staff@example.com',
        name: 'Ina Dexter',
        password: '!unusable',
        is_active: 0,
        is_staff: 1,
        is_superuser: 1,
        date_joined: '2022-01-02T03:04:05.678Z',
      });
    },
    async verify(store) {
      const found = async (search: Partial<UserSearch>) => (await store.users.search({ order: '-id', limit: 10, ...search })).map((user) => user.email);
      expect(await found({ text: 'indexed.s' })).toEqual(['Indexed.Staff@example.com']);
      expect(await found({ isStaff: true, isSuperuser: true, isActive: false })).toEqual(['Indexed.Staff@example.com']);
      expect(await found({ text: 'dext', order: 'name' })).toEqual(['Indexed.Staff@example.com']);
    },
  },
  '0008_audit_target_user': {
    // An admin change as the flows now record it: against the staff member (deleted since), about the user.
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      const userId = user.rows[0]?.id;
      await insertRow(db, 'latchkey_audit_log', {
        event: 'admin_user_changed',
        user_id: null,
        target_user_id: userId,
        created_at: '2025-06-02T03:04:05.678Z',
        ip_address: '192.0.2.1',
        user_agent: 'legacy',
        data: JSON.stringify({ target: userId, change: 'changed', fields: ['name'] }),
      });
    },
    async verify(store) {
      const user = await store.users.findByEmail('legacy@example.com');
      const found = await store.auditLog.search({ userId: user!.id, event: 'admin_user_changed', limit: 10 });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ userId: null, targetUserId: user!.id, data: { target: user!.id, change: 'changed', fields: ['name'] }, user: null, targetUser: { id: user!.id } });
    },
  },
  '0009_webauthn': {
    // The authenticators written before it keep their one-per-type rule and gain no credential id;
    // the user may now hold several keys, each findable by its credential id, none twice.
    async seed() {},
    async verify(store) {
      const user = await store.users.findByEmail('legacy@example.com');
      const before = await store.authenticators.listForUser(user!.id);
      expect(before.map((authenticator) => [authenticator.type, authenticator.credentialId])).toEqual([
        ['totp', null],
        ['recovery_codes', null],
      ]);
      await expect(store.authenticators.create({ userId: user!.id, type: 'totp', data: {}, createdAt: new Date('2026-01-01T00:00:00Z') })).rejects.toMatchObject({ code: 'authenticator_exists' });
      const key = (credentialId: string) => ({ userId: user!.id, type: 'webauthn' as const, data: { name: credentialId }, credentialId, createdAt: new Date('2026-01-01T00:00:00Z') });
      const first = await store.authenticators.create(key('key-one'));
      await store.authenticators.create(key('key-two'));
      await expect(store.authenticators.create(key('key-one'))).rejects.toMatchObject({ code: 'authenticator_exists' });
      expect(await store.authenticators.findByCredentialId('key-one')).toMatchObject({ id: first.id, userId: user!.id, data: { name: 'key-one' } });
      expect(await store.authenticators.findByCredentialId('key-three')).toBeUndefined();
    },
  },
  '0010_mail_outbox': {
    // A new table: the rows written before it are untouched (the other fixtures say so), and a
    // mail can be queued, claimed and removed.
    async seed() {},
    async verify(store) {
      const at = new Date('2030-01-01T00:00:00.000Z');
      const id = await store.mailOutbox.add({ recipients: ['legacy@example.com'], subject: 'Hello', sealedMessage: 'v1.sealed' }, at);
      expect(await store.mailOutbox.claim(id, at, new Date(at.getTime() + 60_000))).toMatchObject({ id, sealedMessage: 'v1.sealed' });
      await store.mailOutbox.remove(id);
      expect(await store.mailOutbox.list()).toEqual([]);
    },
  },
  '0011_sealed_session_data': {
    // Sealed data written since is kept as it is (a test below shows plain data from before dropped).
    async seed(db) {
      const user = await sql<{ id: number }>`select id from latchkey_users where email = ${'legacy@example.com'}`.execute(db);
      await insertRow(db, 'latchkey_sessions', {
        id_hash: 'sealed-session',
        user_id: user.rows[0]?.id,
        data: 'v1.c2VhbGVk',
        created_at: '2030-01-02T03:04:05.678Z',
        last_seen_at: '2030-01-02T03:04:05.678Z',
        expires_at: '2031-01-02T03:04:05.678Z',
        ip_address: '127.0.0.1',
        user_agent: 'sealed',
      });
    },
    async verify(store) {
      expect(await store.sessions.find('sealed-session')).toMatchObject({ sealedData: 'v1.c2VhbGVk' });
    },
  },
  '0012_user_language': {
    // Users from before have chosen no language (''), and a choice is kept from now on.
    async seed() {},
    async verify(store) {
      const legacy = await store.users.findByEmail('legacy@example.com');
      expect(legacy?.language).toBe('');
      expect(await store.users.update(legacy!.id, { language: 'pt-br' })).toMatchObject({ language: 'pt-br' });
      expect((await store.users.findByEmail('legacy@example.com'))?.language).toBe('pt-br');
      await store.users.update(legacy!.id, { language: '' });
    },
  },
};

export function describeMigrations(target: ConformanceTarget): void {
  const { kind, usernameType } = target;
  const names = Object.keys(latchkeyMigrations(kind, usernameType));

  describe('migrations', () => {
    it('has a data fixture for every migration', () => {
      expect(Object.keys(FIXTURES)).toEqual(names);
    });

    it('applies every migration once: a second run is a no-op, and down reverses them', async () => {
      const database = await createTestDatabase(kind, usernameType, { migrate: false });
      try {
        expect(await database.pendingMigrations()).toEqual(names);
        expect(await database.migrate()).toEqual(names);
        expect(await database.migrate()).toEqual([]);
        expect(await database.pendingMigrations()).toEqual([]);
        expect(await database.store.users.count()).toBe(0);

        const migrator = await createMigrator(database.kysely, kind, usernameType);
        const { error } = await migrator.migrateTo(NO_MIGRATIONS);
        expect(error).toBeUndefined();
        expect(await database.pendingMigrations()).toEqual(names);
        expect(await database.migrate()).toEqual(names);
      } finally {
        await database.destroy();
      }
    });

    it('upgrades from every earlier version to the latest, keeping the data written before', async () => {
      for (let applied = 0; applied <= names.length; applied += 1) {
        const database = await createTestDatabase(kind, usernameType, { migrate: false });
        try {
          const before = names.slice(0, applied);
          if (before.length > 0) {
            const migrator = await createMigrator(database.kysely, kind, usernameType);
            const { error } = await migrator.migrateTo(before[before.length - 1]!);
            expect(error).toBeUndefined();
          }
          for (const name of before) await FIXTURES[name]!.seed(database.kysely as Kysely<unknown>, usernameType);

          expect(await database.migrate()).toEqual(names.slice(applied));
          for (const name of before) await FIXTURES[name]!.verify(database.store, usernameType, database.kysely);
          // New rows still get fresh ids after rows written by older code.
          const created = await database.store.users.create({
            ...(usernameType === 'username' ? { username: 'newcomer' } : {}),
            email: 'newcomer@example.com',
            password: 'hash',
            dateJoined: new Date(),
          });
          expect(await database.store.users.findById(created.id)).toEqual(created);
        } finally {
          await database.destroy();
        }
      }
      // One fresh database per version: the time grows with every migration added.
    }, 90_000);

    it('drops the plain data sessions kept before their data was sealed, and keeps the sessions', async () => {
      const database = await createTestDatabase(kind, usernameType, { migrate: false });
      try {
        const migrator = await createMigrator(database.kysely, kind, usernameType);
        expect((await migrator.migrateTo('0010_mail_outbox')).error).toBeUndefined();
        const db = database.kysely as Kysely<unknown>;
        for (const name of names.slice(0, names.indexOf('0010_mail_outbox') + 1)) await FIXTURES[name]!.seed(db, usernameType);
        await sql`update latchkey_sessions set data = ${'{"_password_reset_key":"a-key-read-from-a-backup"}'}`.execute(db);
        await database.migrate();
        const rows = (await sql<{ id_hash: string; data: string }>`select id_hash, data from latchkey_sessions`.execute(db)).rows;
        expect(rows).toEqual([{ id_hash: 'legacy-session', data: '' }]);
      } finally {
        await database.destroy();
      }
    });

    it('refuses to open a database migrated for the other username type', async () => {
      const database = await createTestDatabase(kind, usernameType, { sqliteFile: true });
      const other: UsernameType = usernameType === 'username' ? 'email' : 'username';
      try {
        const error = await openDatabase({ ...database.openOptions, usernameType: other }).then(
          async (opened) => {
            await opened.close();
            return undefined;
          },
          (reason: unknown) => reason,
        );
        expect(isLatchkeyError(error, 'configuration_invalid')).toBe(true);
        expect((error as Error).message).toContain(`migrated for username_type '${usernameType}'`);
        expect((error as Error).message).toContain(`configured with '${other}'`);
      } finally {
        await database.destroy();
      }
    });
  });
}
