import { LatchkeyError } from '../../core/errors.js';
import { ADMIN_ACTIONS, ADMIN_MODELS, type AdminPermission } from '../../admin/model.js';
import type { AdminPermissionRepository } from '../../admin/ports.js';
import { inTransaction, type RepositoryContext } from './dialect.js';

function isKnown(row: { model: string; action: string }): row is AdminPermission {
  return (ADMIN_MODELS as readonly string[]).includes(row.model) && (ADMIN_ACTIONS as readonly string[]).includes(row.action);
}

function byModelThenAction(a: AdminPermission, b: AdminPermission): number {
  return ADMIN_MODELS.indexOf(a.model) - ADMIN_MODELS.indexOf(b.model) || ADMIN_ACTIONS.indexOf(a.action) - ADMIN_ACTIONS.indexOf(b.action);
}

export function createAdminPermissionRepository({ db, dialect }: RepositoryContext): AdminPermissionRepository {
  return {
    async listForUser(userId: number): Promise<AdminPermission[]> {
      const rows = await db.selectFrom('latchkey_admin_permissions').select(['model', 'action']).where('user_id', '=', userId).execute();
      // Sorted here rather than by the database, whose text collation would put 'add' before
      // 'view' and could differ between SQLite and PostgreSQL.
      return rows.filter(isKnown).sort(byModelThenAction);
    },

    async replaceForUser(userId: number, permissions: readonly AdminPermission[]): Promise<void> {
      const unique = new Map(permissions.map(({ model, action }) => [`${model}:${action}`, { user_id: userId, model, action }]));
      await inTransaction(db, async (trx) => {
        // On PostgreSQL the user's row stays locked until the end: two parallel replacements then
        // run one after the other (rather than the second's insert colliding with the first's),
        // and the user cannot be deleted in between. SQLite has one writer at a time anyway.
        const query = trx.selectFrom('latchkey_users').select('id').where('id', '=', userId);
        const user = await (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
        if (user === undefined) throw new LatchkeyError('not_found', 'The user does not exist.');
        await trx.deleteFrom('latchkey_admin_permissions').where('user_id', '=', userId).execute();
        if (unique.size > 0) await trx.insertInto('latchkey_admin_permissions').values([...unique.values()]).execute();
      });
    },
  };
}
