/**
 * The user an audit record is about, beside the user it is recorded against. An admin change is
 * recorded against the staff member who made it (`user_id`), with the user changed named in its
 * data (`{"target": <id>}`); the admin's "filter by user" must find those changes too, and reading
 * every record's JSON to do so would scan the whole trail. So the target gets a column of its own,
 * filled in by the admin flows' events (account/events.ts), and an index.
 *
 * Records written before this migration are filled in from their data. Only the admin's events
 * name a target, and only as a user id (a positive integer of the ids' column, which is 32-bit on
 * PostgreSQL, and on SQLite too for the same answer); a value of any other shape is left out
 * rather than guessed at. Like `user_id`, the column is kept when the user is deleted (the trail outlives
 * the account) and so has no foreign key.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DatabaseDialect } from '../kysely/dialect.js';

/** The events whose data names a target user (account/events.ts). */
const EVENTS_WITH_A_TARGET = ['admin_user_changed', 'admin_permissions_changed'] as const;

export function auditTargetUserMigration(dialect: DatabaseDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('latchkey_audit_log').addColumn('target_user_id', 'integer').execute();
      const events = sql.join(EVENTS_WITH_A_TARGET.map((event) => sql.lit(event)));
      if (dialect === 'sqlite') {
        await sql`update latchkey_audit_log set target_user_id = json_extract(data, '$.target')
          where event in (${events}) and json_valid(data) and json_type(data, '$.target') = 'integer'
          and json_extract(data, '$.target') between 1 and 2147483647`.execute(db);
      } else {
        // Only a whole number that fits the integer column, as user ids do. PostgreSQL may
        // evaluate a WHERE's terms in any order, so the CASE makes sure only ten digits at most
        // are ever cast.
        const target = sql`(data::jsonb ->> 'target')`;
        await sql`update latchkey_audit_log set target_user_id = ${target}::integer
          where event in (${events}) and jsonb_typeof(data::jsonb -> 'target') = 'number'
          and case when ${target} ~ '^[0-9]{1,10}$' then ${target}::bigint <= 2147483647 else false end`.execute(db);
      }
      // Most records have no target: the index holds only those that do. A query for
      // `target_user_id = ?` implies the column is not null, so both databases use it.
      await db.schema
        .createIndex('latchkey_audit_log_target_user_index')
        .on('latchkey_audit_log')
        .columns(['target_user_id', 'id'])
        .where(sql.ref('target_user_id'), 'is not', null)
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('latchkey_audit_log_target_user_index').execute();
      await db.schema.alterTable('latchkey_audit_log').dropColumn('target_user_id').execute();
    },
  };
}
