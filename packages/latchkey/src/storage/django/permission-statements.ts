/**
 * The statements that read the permissions users hold in Django's admin: granted directly
 * (users_user_user_permissions) or through a group (users_user_groups, auth_group_permissions),
 * each with its permission's app label from django_content_type. Read as one list ordered by
 * (user, group, permission), which is also the key each batch continues after.
 */
import type { DjangoSqlConnection } from './sql-connection.js';

/** Which of the two ways of granting the database has tables for. */
export interface PermissionTables {
  direct: boolean;
  groups: boolean;
}

export async function findPermissionTables(connection: DjangoSqlConnection): Promise<PermissionTables> {
  const present = async (tables: string[]) => (await Promise.all(tables.map((table) => connection.columns(table)))).every((columns) => columns !== undefined);
  if (!(await present(['auth_permission', 'django_content_type']))) return { direct: false, groups: false };
  return {
    direct: await present(['users_user_user_permissions']),
    groups: await present(['users_user_groups', 'auth_group', 'auth_group_permissions']),
  };
}

/** Every grant, as rows (user_id, group_key, group_name, permission_id, app_label, codename); group_key 0 for a direct grant. */
function grantsQuery(tables: PermissionTables): string {
  const branches: string[] = [];
  if (tables.direct) {
    branches.push(`select granted.user_id as user_id, 0 as group_key, cast(null as varchar(150)) as group_name,
        permission.id as permission_id, content_type.app_label as app_label, permission.codename as codename
      from users_user_user_permissions as granted
      join auth_permission as permission on permission.id = granted.permission_id
      join django_content_type as content_type on content_type.id = permission.content_type_id`);
  }
  if (tables.groups) {
    branches.push(`select member.user_id as user_id, member_of.id as group_key, member_of.name as group_name,
        permission.id as permission_id, content_type.app_label as app_label, permission.codename as codename
      from users_user_groups as member
      join auth_group as member_of on member_of.id = member.group_id
      join auth_group_permissions as granted on granted.group_id = member_of.id
      join auth_permission as permission on permission.id = granted.permission_id
      join django_content_type as content_type on content_type.id = permission.content_type_id`);
  }
  return branches.join('\nunion all\n');
}

export function countPermissionsStatement(tables: PermissionTables): string {
  return `select count(*) as count from (${grantsQuery(tables)}) as grants`;
}

/**
 * The next batch after the grant (user, group, permission) in $1..$3 (none for the first), at most
 * $4 rows (or $1 for the first). Each batch evaluates the union anew: permissions are granted to
 * the staff, a few hundred rows where a project has a million users.
 */
export function permissionBatchStatement(tables: PermissionTables, after: boolean): string {
  const where = after ? 'where (user_id, group_key, permission_id) > ($1, $2, $3)' : '';
  return `select * from (${grantsQuery(tables)}) as grants ${where}
    order by user_id, group_key, permission_id limit ${after ? '$4' : '$1'}`;
}
