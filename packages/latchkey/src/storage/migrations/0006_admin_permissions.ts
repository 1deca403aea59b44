/**
 * The admin area's per-user permissions (Django's user_permissions, without its content types):
 * one row per (user, model, action) a superuser granted. Model and action are kept as the names of
 * admin/model.ts rather than as ids of a permission table, so adding a model to the admin needs no
 * data migration.
 */
import type { Kysely, Migration } from 'kysely';

/** Nothing here differs between SQLite and PostgreSQL, so it takes no dialect. */
export function adminPermissionsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('latchkey_admin_permissions')
        // The permissions go with the account.
        .addColumn('user_id', 'integer', (column) => column.notNull().references('latchkey_users.id').onDelete('cascade'))
        /** One of ADMIN_MODELS: 'users.user'. */
        .addColumn('model', 'text', (column) => column.notNull())
        /** One of ADMIN_ACTIONS: 'view', 'add', 'change', 'delete'. */
        .addColumn('action', 'text', (column) => column.notNull())
        // A permission is granted once. Led by user_id, its index serves the one read (a staff
        // user's permissions, on every admin request) and the cascade when a user is deleted.
        .addUniqueConstraint('latchkey_admin_permissions_user_model_action_unique', ['user_id', 'model', 'action'])
        .execute();
    },

    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('latchkey_admin_permissions').execute();
    },
  };
}
