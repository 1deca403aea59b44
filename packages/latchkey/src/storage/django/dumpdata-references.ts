/**
 * What a dump's entries refer to, and how: a user by id or, with `--natural-foreign`, by
 * [username] ([email] when users log in by email); a permission by id or by
 * [codename, app_label, model]; a group by id or by [name]. A reference by id to a permission
 * needs the dump's auth.permission and contenttypes.contenttype entries; one that cannot be
 * resolved is refused with the dumpdata command that would have made a readable dump.
 */
import type { DjangoLoginField } from '../../django-import/model.js';
import { LoginIndex } from './dumpdata-login-index.js';

/** One `{model, pk, fields}` of a dump. */
export interface DumpEntry {
  model: string;
  pk: unknown;
  fields: Record<string, unknown>;
}

/** A reference the dump cannot resolve: the message says what to add to the dumpdata command. */
export class UnresolvedReferenceError extends Error {}

export interface GrantedPermission {
  appLabel: string;
  codename: string;
}

interface DumpedGroup {
  name: string;
  permissions: GrantedPermission[];
}

const NATURAL_FOREIGN_HINT = 'add --natural-foreign to the dumpdata command (or dump auth.Permission and contenttypes with the rest)';

const isNaturalKey = (value: unknown): value is unknown[] => Array.isArray(value);
const asKey = (value: unknown) => (typeof value === 'number' || typeof value === 'string' ? String(value) : JSON.stringify(value));
const where = (entry: DumpEntry) => `${entry.model} ${asKey(entry.pk)}`;

/** The users seen so far, by login, for references by natural key. */
export class UserReferences {
  private readonly idsByLogin = new LoginIndex();
  /** What natural keys name users by, from the first user seen: the username, or the email when the model has none. */
  loginField: DjangoLoginField | undefined;

  add(user: DumpEntry, id: number): void {
    this.loginField ??= 'username' in user.fields ? 'username' : 'email';
    const login = user.fields[this.loginField];
    if (typeof login === 'string') this.idsByLogin.set(login, id);
  }

  /** The id `entry.fields.user` stands for (an id as it is, a natural key looked up), or undefined while that user is not known. */
  tryResolve(entry: DumpEntry): unknown {
    const value = entry.fields.user;
    if (!isNaturalKey(value)) return value;
    return typeof value[0] === 'string' ? this.idsByLogin.get(value[0]) : undefined;
  }

  /** As tryResolve, once every user has been seen: a user still unknown is an error. */
  resolve(entry: DumpEntry): unknown {
    const id = this.tryResolve(entry);
    if (entry.fields.user === undefined || entry.fields.user === null) throw new UnresolvedReferenceError(`${where(entry)} has no user`);
    if (id === undefined) {
      throw new UnresolvedReferenceError(`${where(entry)} refers to the user ${JSON.stringify(entry.fields.user)}, who is not among the dump's users.user entries (dump users.User with the rest)`);
    }
    return id;
  }
}

/** Permissions and groups, for users' user_permissions and groups. */
export class PermissionReferences {
  private readonly contentTypes = new Map<string, { appLabel: string; model: string }>();
  private readonly permissionsById = new Map<string, { codename: string; contentType: unknown }>();
  private readonly groupsById = new Map<string, DumpedGroup>();
  private readonly groupsByName = new Map<string, DumpedGroup>();

  constructor(entries: { contentTypes: DumpEntry[]; permissions: DumpEntry[]; groups: DumpEntry[] }) {
    for (const { pk, fields } of entries.contentTypes) {
      if (typeof fields.app_label === 'string' && typeof fields.model === 'string') this.contentTypes.set(asKey(pk), { appLabel: fields.app_label, model: fields.model });
    }
    for (const { pk, fields } of entries.permissions) {
      if (typeof fields.codename === 'string') this.permissionsById.set(asKey(pk), { codename: fields.codename, contentType: fields.content_type });
    }
    for (const entry of entries.groups) {
      const name = entry.fields.name;
      if (typeof name !== 'string') continue;
      const group = { name, permissions: this.permissionList(entry, 'permissions') };
      this.groupsById.set(asKey(entry.pk), group);
      this.groupsByName.set(name, group);
    }
  }

  /** The permissions listed in `entry.fields[field]` (a user's user_permissions, a group's permissions). */
  permissionList(entry: DumpEntry, field: string): GrantedPermission[] {
    return this.list(entry, field).map((reference) => this.permission(entry, reference));
  }

  /** The groups listed in a user's `groups`. */
  groups(entry: DumpEntry): DumpedGroup[] {
    return this.list(entry, 'groups').map((reference) => {
      const [name] = isNaturalKey(reference) ? reference : [];
      const group = isNaturalKey(reference) ? (typeof name === 'string' ? this.groupsByName.get(name) : undefined) : this.groupsById.get(asKey(reference));
      if (group === undefined) {
        throw new UnresolvedReferenceError(`${where(entry)} is in the group ${JSON.stringify(reference)}, which the dump does not hold (dump auth.Group with the rest)`);
      }
      return group;
    });
  }

  private list(entry: DumpEntry, field: string): unknown[] {
    const value = entry.fields[field] ?? [];
    if (!Array.isArray(value)) throw new UnresolvedReferenceError(`${where(entry)} has ${field} ${JSON.stringify(value)}, not a list`);
    return value;
  }

  private permission(entry: DumpEntry, reference: unknown): GrantedPermission {
    if (isNaturalKey(reference)) {
      const [codename, appLabel] = reference;
      if (typeof codename === 'string' && typeof appLabel === 'string') return { appLabel, codename };
    } else {
      const permission = this.permissionsById.get(asKey(reference));
      const contentType = permission === undefined ? undefined : this.contentType(permission.contentType);
      if (permission !== undefined && contentType !== undefined) return { appLabel: contentType.appLabel, codename: permission.codename };
    }
    throw new UnresolvedReferenceError(`${where(entry)} refers to the permission ${JSON.stringify(reference)}, which the dump does not describe: ${NATURAL_FOREIGN_HINT}`);
  }

  private contentType(reference: unknown): { appLabel: string } | undefined {
    if (isNaturalKey(reference)) return typeof reference[0] === 'string' ? { appLabel: reference[0] } : undefined;
    return this.contentTypes.get(asKey(reference));
  }
}
