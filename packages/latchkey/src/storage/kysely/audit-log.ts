import type { Selectable } from 'kysely';
import type { AuditLogRepository, AuditSearch, ListedAuditRecord } from '../../account/ports.js';
import type { AuditRecord, NewAuditRecord } from '../../account/model.js';
import type { RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type AuditLogTable } from './schema.js';

function toAuditRecord(row: Selectable<AuditLogTable>): AuditRecord {
  return {
    id: row.id,
    event: row.event,
    userId: row.user_id,
    createdAt: fromInstantColumn(row.created_at),
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

export function createAuditLogRepository({ db, usernameType }: RepositoryContext): AuditLogRepository {
  return {
    async record(entry: NewAuditRecord): Promise<AuditRecord> {
      const row = await db
        .insertInto('latchkey_audit_log')
        .values({
          event: entry.event,
          user_id: entry.userId,
          created_at: toInstantColumn(entry.createdAt),
          ip_address: entry.ipAddress.slice(0, 64),
          user_agent: entry.userAgent.slice(0, 512),
          data: JSON.stringify(entry.data),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toAuditRecord(row);
    },

    async listForUser(userId: number, limit = 100): Promise<AuditRecord[]> {
      const rows = await db
        .selectFrom('latchkey_audit_log')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toAuditRecord);
    },

    async search(query: AuditSearch): Promise<ListedAuditRecord[]> {
      let select = db
        .selectFrom('latchkey_audit_log as l')
        // Left: the trail outlives its users, whose ids are then dangling.
        .leftJoin('latchkey_users as u', 'u.id', 'l.user_id')
        .selectAll('l')
        .select('u.email as user_email')
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select('u.username as user_username'));
      if (query.userId !== undefined) select = select.where('l.user_id', '=', query.userId);
      if (query.event !== undefined) select = select.where('l.event', '=', query.event);
      if (query.afterId !== undefined) select = select.where('l.id', '<', query.afterId);
      const rows = await select.orderBy('l.id', 'desc').limit(query.limit).execute();
      return rows.map((row) => {
        const { user_email, ...record } = row;
        const username = 'user_username' in row ? (row.user_username as string | null) : null;
        const user = record.user_id === null || user_email === null ? null : { id: record.user_id, username: username ?? null, email: user_email };
        return { ...toAuditRecord(record), user };
      });
    },
  };
}
