/**
 * The import's conflict rules for users and what is theirs alone: email addresses, API tokens,
 * admin permissions. Each says when an imported row is the one Latchkey holds already, and which
 * stored row keeps its place when the two collide: always the stored one, since no row is changed
 * once written.
 */
import type { EmailAddress, User } from '../account/model.js';
import type { UsernameType } from '../config/settings.js';
import { normalizeUsernameKey } from '../core/identifiers.js';
import type { ApiToken } from '../tokens/model.js';
import { definedValues, distinct, type KindConflicts } from './conflicts.js';
import type {
  AdminPermissionImportTable,
  ApiTokenImportTable,
  EmailAddressImportTable,
  ImportedPermission,
  StoredApiToken,
  StoredLogin,
  StoredPermission,
  UserImportTable,
} from './ports.js';

/**
 * A user is the same user when the id and the login match; the login (the username, compared as
 * Latchkey compares usernames: ignoring case and width; or the email address) may be no other
 * user's.
 */
export function userConflicts(usernameType: UsernameType): KindConflicts<User, StoredLogin, UserImportTable> {
  const byUsername = usernameType === 'username';
  const loginOf = (user: User): string => (byUsername ? normalizeUsernameKey(user.username ?? '') : user.email);
  // usernameKey is never null where users log in by username: the column is NOT NULL there.
  const storedLoginOf = (stored: StoredLogin): string => (byUsername ? (stored.usernameKey ?? '') : stored.email);
  return {
    idOf: (user) => user.id,
    storedIdOf: (stored) => stored.id,
    identity: loginOf,
    storedIdentity: storedLoginOf,
    readById: (table, rows) => table.withIds(distinct(rows.map((user) => user.id))),
    takenReason: (id) => `id ${id} is another user's in Latchkey`,
    unique: [
      {
        of: loginOf,
        heldBy: storedLoginOf,
        read: (table, rows) => {
          const logins = definedValues(rows.map(loginOf));
          return byUsername ? table.withUsernameKeys(logins) : table.withEmails(logins);
        },
        reason: (holder) =>
          byUsername ? `its username is user ${holder}'s in Latchkey, which compares usernames ignoring case` : `its email address is user ${holder}'s in Latchkey`,
      },
    ],
  };
}

const addressOfUser = (address: EmailAddress): string => `${address.userId}:${address.email}`;
const readAddressesOfUsers = (table: EmailAddressImportTable, rows: readonly EmailAddress[]): Promise<EmailAddress[]> => table.ofUsers(distinct(rows.map((address) => address.userId)));

/**
 * An address is the same when it is the same user's same address. A user has each address once
 * and one primary address; and an address one user has verified is not attached to another, so
 * that it cannot sign them in or receive their mail (unverified, it may be anyone's).
 */
export const emailAddressConflicts: KindConflicts<EmailAddress, EmailAddress, EmailAddressImportTable> = {
  idOf: (address) => address.id,
  storedIdOf: (stored) => stored.id,
  identity: addressOfUser,
  storedIdentity: addressOfUser,
  readById: (table, rows) => table.withIds(distinct(rows.map((address) => address.id))),
  takenReason: (id) => `id ${id} is another email address's in Latchkey`,
  unique: [
    {
      of: addressOfUser,
      heldBy: addressOfUser,
      read: readAddressesOfUsers,
      reason: (holder) => `the user has this address already in Latchkey (id ${holder})`,
    },
    {
      of: (address) => (address.primary ? String(address.userId) : undefined),
      heldBy: (stored) => (stored.primary ? String(stored.userId) : undefined),
      read: readAddressesOfUsers,
      reason: (holder) => `the user has another primary address (id ${holder})`,
    },
    {
      of: (address) => (address.verified ? address.email : undefined),
      heldBy: (stored) => (stored.verified ? stored.email : undefined),
      read: (table, rows) => table.verifiedWithEmails(definedValues(rows.map((address) => (address.verified ? address.email : undefined)))),
      reason: (holder) => `another user has verified this address (email address id ${holder})`,
    },
  ],
};

/** A user has one API token (its id is the user's), and no two users share a key. */
export const apiTokenConflicts: KindConflicts<ApiToken, StoredApiToken, ApiTokenImportTable> = {
  idOf: (token) => token.userId,
  storedIdOf: (stored) => stored.userId,
  identity: (token) => token.keyHash,
  storedIdentity: (stored) => stored.keyHash,
  readById: (table, rows) => table.ofUsers(distinct(rows.map((token) => token.userId))),
  takenReason: () => 'the user has another API token in Latchkey',
  unique: [
    {
      of: (token) => token.keyHash,
      heldBy: (stored) => stored.keyHash,
      read: (table, rows) => table.withKeyHashes(definedValues(rows.map((token) => token.keyHash))),
      reason: (holder) => `user ${holder} has the same key`,
    },
  ],
};

const storedPermissionKey = ({ userId, model, action }: StoredPermission): string => `${userId}:${model}:${action}`;
const permissionKey = ({ userId, permission }: ImportedPermission): string => storedPermissionKey({ userId, ...permission });

/** A permission is a user's once: a grant already there is present, whoever gave it. */
export const adminPermissionConflicts: KindConflicts<ImportedPermission, StoredPermission, AdminPermissionImportTable> = {
  idOf: permissionKey,
  storedIdOf: storedPermissionKey,
  identity: permissionKey,
  storedIdentity: storedPermissionKey,
  readById: (table, rows) => table.ofUsers(distinct(rows.map((row) => row.userId))),
  takenReason: () => 'the permission is there already',
  // The same grant may come twice: directly and through a group, through two groups, or on both
  // DRF's token and its admin proxy. The first is written, the others reported.
  repeatedReason: 'the user is granted it once already (directly, through another group, or on the token model and its proxy)',
  unique: [],
};
