/**
 * Sessions keep their data sealed from now on (sessions/sealed-data.ts). What sessions written
 * before kept in plain text (a password-reset key opened from its link, a login waiting at a
 * stage) is dropped here rather than left readable in the table, in backups and in replicas until
 * those sessions end. Signed-in users stay signed in (the user is a column of its own); a journey
 * under way in one of them starts again.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function sealedSessionDataMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`update latchkey_sessions set data = ''`.execute(db);
    },
    async down(): Promise<void> {
      // Nothing to undo: the sealed values stay, and older code reads them as no data at all.
    },
  };
}
