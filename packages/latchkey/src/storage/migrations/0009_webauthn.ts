/**
 * Passkeys and security keys (WebAuthn). A user may hold any number of them, each an authenticator
 * of type `webauthn`, so the one-per-type unique index now leaves that type out: it still decides
 * between two parallel activations of an authenticator app or of recovery codes. A passkey login
 * is told only the credential's id by the browser, so the id gets a column of its own, unique
 * across all users (two accounts can never claim one credential), and a plain index on the user
 * serves the per-user lookups the partial index no longer can.
 */
import { sql, type Kysely, type Migration } from 'kysely';

const UNIQUE_TYPE_INDEX = 'latchkey_authenticators_user_type_unique';

export function webauthnMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('latchkey_authenticators').addColumn('credential_id', 'text').execute();
      await db.schema.dropIndex(UNIQUE_TYPE_INDEX).execute();
      await db.schema
        .createIndex(UNIQUE_TYPE_INDEX)
        .on('latchkey_authenticators')
        .columns(['user_id', 'type'])
        .unique()
        .where(sql.ref('type'), '<>', 'webauthn')
        .execute();
      await db.schema.createIndex('latchkey_authenticators_user_index').on('latchkey_authenticators').column('user_id').execute();
      await db.schema
        .createIndex('latchkey_authenticators_credential_unique')
        .on('latchkey_authenticators')
        .column('credential_id')
        .unique()
        .where(sql.ref('credential_id'), 'is not', null)
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.deleteFrom('latchkey_authenticators' as never).where(sql.ref('type'), '=', 'webauthn').execute();
      await db.schema.dropIndex('latchkey_authenticators_credential_unique').execute();
      await db.schema.dropIndex('latchkey_authenticators_user_index').execute();
      await db.schema.dropIndex(UNIQUE_TYPE_INDEX).execute();
      await db.schema.createIndex(UNIQUE_TYPE_INDEX).on('latchkey_authenticators').columns(['user_id', 'type']).unique().execute();
      await db.schema.alterTable('latchkey_authenticators').dropColumn('credential_id').execute();
    },
  };
}
