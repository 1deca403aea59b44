import type { Selectable } from 'kysely';
import type { AuditLogRepository, AuditSearch, ListedAuditRecord, UserLabel } from '../../account/ports.js';
import type { AuditRecord, NewAuditRecord } from '../../account/model.js';
import type { RepositoryContext } from './dialect.js';
import { fromInstantColumn, toInstantColumn, type AuditLogTable } from './schema.js';

function toAuditRecord(row: Selectable<AuditLogTable>): AuditRecord {
  return {
    id: row.id,
    event: row.event,
    userId: row.user_id,
    targetUserId: row.target_user_id,
    createdAt: fromInstantColumn(row.created_at),
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

/** Who a listed record names, while they exist: a deleted user's id is left dangling, with no label. */
function label(id: number | null, email: string | null, username: string | null | undefined): UserLabel | null {
  return id === null || email === null ? null : { id, username: username ?? null, email };
}

export function createAuditLogRepository({ db, usernameType }: RepositoryContext): AuditLogRepository {
  return {
    async record(entry: NewAuditRecord): Promise<AuditRecord> {
      const row = await db
        .insertInto('latchkey_audit_log')
        .values({
          event: entry.event,
          user_id: entry.userId,
          target_user_id: entry.targetUserId ?? null,
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
        .leftJoin('latchkey_users as t', 't.id', 'l.target_user_id')
        .selectAll('l')
        .select(['u.email as user_email', 't.email as target_email'])
        // The username column exists only in projects that sign in by username.
        .$if(usernameType === 'username', (builder) => builder.select(['u.username as user_username', 't.username as target_username']));
      const { userId } = query;
      // The user's own records and the admin changes made to them: each side has its index.
      if (userId !== undefined) select = select.where((where) => where.or([where('l.user_id', '=', userId), where('l.target_user_id', '=', userId)]));
      if (query.event !== undefined) select = select.where('l.event', '=', query.event);
      if (query.afterId !== undefined) select = select.where('l.id', '<', query.afterId);
      const rows = await select.orderBy('l.id', 'desc').limit(query.limit).execute();
      return rows.map((row) => {
        const named = row as { user_username?: string | null; target_username?: string | null };
        return {
          ...toAuditRecord(row),
          user: label(row.user_id, row.user_email, named.user_username),
          targetUser: label(row.target_user_id, row.target_email, named.target_username),
        };
      });
    },
  };
}
