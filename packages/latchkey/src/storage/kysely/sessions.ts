import type { Selectable, Updateable } from 'kysely';
import type { SessionChanges, StoredSession } from '../../sessions/model.js';
import type { ListedSession, SessionRepository, SessionSearch } from '../../sessions/ports.js';
import { translateConstraintViolations, type RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type SessionsTable, type UserRow } from './schema.js';
import { userLabelOf } from './user-labels.js';
import { toUser } from './users.js';
import type { User } from '../../account/model.js';

function toStoredSession(row: Selectable<SessionsTable>): StoredSession {
  return {
    idHash: row.id_hash,
    userId: row.user_id,
    sealedData: row.data,
    createdAt: fromInstantColumn(row.created_at),
    lastSeenAt: fromInstantColumn(row.last_seen_at),
    expiresAt: fromInstantColumn(row.expires_at),
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
  };
}

function toSessionUpdate(changes: SessionChanges): Updateable<SessionsTable> {
  const update: Updateable<SessionsTable> = {};
  if (changes.userId !== undefined) update.user_id = changes.userId;
  if (changes.sealedData !== undefined) update.data = changes.sealedData;
  if (changes.lastSeenAt !== undefined) update.last_seen_at = toInstantColumn(changes.lastSeenAt);
  if (changes.expiresAt !== undefined) update.expires_at = toInstantColumn(changes.expiresAt);
  return update;
}

export function createSessionRepository({ db, dialect, usernameType, userFields, credentialReads }: RepositoryContext): SessionRepository {
  return {
    async create(session: StoredSession): Promise<void> {
      // A foreign-key failure (the user was deleted while logging in) becomes 'not_found'.
      await translateConstraintViolations(db, dialect, () =>
        db
          .insertInto('latchkey_sessions')
          .values({
            id_hash: session.idHash,
            user_id: session.userId,
            data: session.sealedData,
            created_at: toInstantColumn(session.createdAt),
            last_seen_at: toInstantColumn(session.lastSeenAt),
            expires_at: toInstantColumn(session.expiresAt),
            ip_address: session.ipAddress,
            user_agent: session.userAgent,
          })
          .execute(),
      );
    },

    async find(idHash: string): Promise<StoredSession | undefined> {
      const row = await db.selectFrom('latchkey_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row === undefined ? undefined : toStoredSession(row);
    },

    async findWithUser(idHash: string): Promise<{ session: StoredSession; user: User | undefined } | undefined> {
      const row = await credentialReads.sessionWithUser(idHash);
      if (row === undefined) return undefined;
      // The join is a left one: every user column is null together, when the session has no user.
      const user = row.id === null ? undefined : toUser(row as UserRow, userFields);
      return { session: toStoredSession(row), user };
    },

    async update(idHash: string, changes: SessionChanges): Promise<boolean> {
      const update = toSessionUpdate(changes);
      if (Object.keys(update).length === 0) {
        const row = await db.selectFrom('latchkey_sessions').select('id_hash').where('id_hash', '=', idHash).executeTakeFirst();
        return row !== undefined;
      }
      const result = await translateConstraintViolations(db, dialect, () =>
        db.updateTable('latchkey_sessions').set(update).where('id_hash', '=', idHash).executeTakeFirst(),
      );
      return result.numUpdatedRows > 0n;
    },

    async delete(idHash: string): Promise<boolean> {
      const result = await db.deleteFrom('latchkey_sessions').where('id_hash', '=', idHash).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async deleteForUser(userId: number, options: { exceptIdHash?: string } = {}): Promise<number> {
      let query = db.deleteFrom('latchkey_sessions').where('user_id', '=', userId);
      if (options.exceptIdHash !== undefined) {
        query = query.where('id_hash', '!=', options.exceptIdHash);
      }
      const result = await query.executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async listForUser(userId: number): Promise<StoredSession[]> {
      // Most recently used first, as a "your sessions" page lists them.
      const rows = await db
        .selectFrom('latchkey_sessions')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('last_seen_at', 'desc')
        .orderBy('id_hash')
        .execute();
      return rows.map(toStoredSession);
    },

    async deleteExpired(now: Date, idleSince?: Date): Promise<number> {
      // ISO 8601 strings of one fixed format sort as the instants they denote, so on SQLite the
      // TEXT comparison is a time comparison; PostgreSQL compares timestamptz values.
      const result = await db
        .deleteFrom('latchkey_sessions')
        .where((eb) =>
          eb.or([
            eb('expires_at', '<=', toInstantColumn(now)),
            ...(idleSince === undefined ? [] : [eb('last_seen_at', '<=', toInstantColumn(idleSince))]),
          ]),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async search(query: SessionSearch): Promise<ListedSession[]> {
      // The join leaves out sessions without a user. Only the listed columns are read: never data.
      let select = db
        .selectFrom('latchkey_sessions as s')
        .innerJoin('latchkey_users as u', 'u.id', 's.user_id')
        .select(['s.id_hash', 's.user_id', 's.created_at', 's.last_seen_at', 's.expires_at', 's.ip_address', 's.user_agent', 'u.email as user_email'])
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'))
        .where('s.expires_at', '>', toInstantColumn(query.now))
        .where('s.last_seen_at', '>', toInstantColumn(query.idleSince));
      if (query.userId !== undefined) select = select.where('s.user_id', '=', query.userId);
      const { after } = query;
      if (after !== undefined) {
        const seen = toInstantColumn(after.lastSeenAt);
        select = select.where((eb) => eb.or([eb('s.last_seen_at', '<', seen), eb.and([eb('s.last_seen_at', '=', seen), eb('s.id_hash', '>', after.idHash)])]));
      }
      const rows = await select.orderBy('s.last_seen_at', 'desc').orderBy('s.id_hash', 'asc').limit(query.limit).execute();
      return rows.map((row) => ({
        idHash: row.id_hash,
        userId: row.user_id!,
        createdAt: fromInstantColumn(row.created_at),
        lastSeenAt: fromInstantColumn(row.last_seen_at),
        expiresAt: fromInstantColumn(row.expires_at),
        ipAddress: row.ip_address,
        userAgent: row.user_agent,
        user: userLabelOf({ user_id: row.user_id!, user_email: row.user_email, user_username: 'user_username' in row ? (row.user_username as string | null) : null }),
      }));
    },
  };
}
