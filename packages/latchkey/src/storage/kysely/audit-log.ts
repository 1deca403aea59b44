import type { Selectable } from 'kysely';
import type { AuditLogRepository } from '../../account/ports.js';
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

export function createAuditLogRepository({ db }: RepositoryContext): AuditLogRepository {
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
  };
}
