/**
 * The import's rules for users, their addresses, API tokens and admin permissions, each shown on
 * the rows it is about: what Latchkey holds already, a batch offered to it, and what becomes of
 * each row. No database: the stored rows are given as the port would read them.
 */
import { describe, expect, it } from 'vitest';
import type { EmailAddress, User } from '../account/model.js';
import { adminPermissionConflicts, apiTokenConflicts, emailAddressConflicts, userConflicts } from './account-conflicts.js';
import type { ImportedPermission, StoredLogin } from './ports.js';
import { settleAgainst as settle } from '../testing/import-conflicts.js';

const JOINED = new Date('2021-03-04T05:06:07Z');
const user = (id: number, fields: Partial<User> = {}): User => ({
  id,
  username: `user${id}`,
  email: `user${id}@example.com`,
  name: '',
  password: '!',
  isActive: true,
  isStaff: false,
  isSuperuser: false,
  dateJoined: JOINED,
  lastLogin: null,
  language: '',
  ...fields,
});
const login = (id: number, email: string, usernameKey: string | null = null): StoredLogin => ({ id, email, usernameKey });

describe('users, where they log in by email', () => {
  const users = userConflicts('email');

  it('finds a user imported before (same id, same address) present', () => {
    expect(settle(users, [user(7)], [login(7, 'user7@example.com')])).toEqual(['present']);
  });

  it('skips a user whose id is another Latchkey user', () => {
    expect(settle(users, [user(7)], [login(7, 'someone@example.com')])).toEqual([{ skipped: "id 7 is another user's in Latchkey" }]);
  });

  it("skips a user whose address is another Latchkey user's login", () => {
    expect(settle(users, [user(8, { email: 'owner@example.com' })], [login(1, 'owner@example.com')])).toEqual([{ skipped: "its email address is user 1's in Latchkey" }]);
  });

  it('imports the first of two users of the batch with one address, and skips the second', () => {
    const rows = [user(8, { email: 'twin@example.com' }), user(9, { email: 'twin@example.com' })];
    expect(settle(users, rows, [])).toEqual(['inserted', { skipped: "its email address is user 8's in Latchkey" }]);
  });
});

describe('users, where they log in by username', () => {
  const users = userConflicts('username');

  it('skips a user whose username differs from a Latchkey user\'s only in case', () => {
    expect(settle(users, [user(2, { username: 'BOB' })], [login(1, 'bob@example.com', 'bob')])).toEqual([
      { skipped: "its username is user 1's in Latchkey, which compares usernames ignoring case" },
    ]);
  });

  it('finds a user present by id and username, whatever the address', () => {
    expect(settle(users, [user(3, { username: 'Carol', email: 'new@example.com' })], [login(3, 'old@example.com', 'carol')])).toEqual(['present']);
  });

  it('lets two users share an address (it is not their login)', () => {
    expect(settle(users, [user(4, { email: 'team@example.com' })], [login(1, 'team@example.com', 'user1')])).toEqual(['inserted']);
  });
});

describe('email addresses', () => {
  const address = (id: number, userId: number, email: string, fields: Partial<EmailAddress> = {}): EmailAddress => ({ id, userId, email, verified: false, primary: false, ...fields });

  it('does not attach an imported address another user has verified', () => {
    expect(settle(emailAddressConflicts, [address(20, 2, 'shared@example.com', { verified: true })], [address(10, 1, 'shared@example.com', { verified: true })])).toEqual([
      { skipped: 'another user has verified this address (email address id 10)' },
    ]);
  });

  it('attaches an unverified address another user has too: until verified it proves nothing', () => {
    expect(settle(emailAddressConflicts, [address(20, 2, 'shared@example.com')], [address(10, 1, 'shared@example.com', { verified: true })])).toEqual(['inserted']);
  });

  it('attaches a verified address another user has only unverified', () => {
    expect(settle(emailAddressConflicts, [address(20, 2, 'shared@example.com', { verified: true })], [address(10, 1, 'shared@example.com')])).toEqual(['inserted']);
  });

  it('skips a second primary address of a user, naming the primary one', () => {
    expect(settle(emailAddressConflicts, [address(21, 1, 'second@example.com', { primary: true })], [address(10, 1, 'first@example.com', { primary: true })])).toEqual([
      { skipped: 'the user has another primary address (id 10)' },
    ]);
  });

  it('skips an address the user has already under another id', () => {
    expect(settle(emailAddressConflicts, [address(22, 1, 'first@example.com')], [address(10, 1, 'first@example.com')])).toEqual([
      { skipped: 'the user has this address already in Latchkey (id 10)' },
    ]);
  });

  it('finds an address imported before present, and one whose id is another address skipped', () => {
    const stored = [address(10, 1, 'first@example.com', { verified: true, primary: true })];
    expect(settle(emailAddressConflicts, [address(10, 1, 'first@example.com', { verified: true, primary: true })], stored)).toEqual(['present']);
    expect(settle(emailAddressConflicts, [address(10, 2, 'other@example.com')], stored)).toEqual([{ skipped: "id 10 is another email address's in Latchkey" }]);
  });
});

describe('API tokens', () => {
  const token = (userId: number, keyHash: string) => ({ userId, keyHash, sealedKey: 'sealed', createdAt: JOINED });

  it('keeps the token a user has in Latchkey, and skips the imported one', () => {
    expect(settle(apiTokenConflicts, [token(1, 'new-hash')], [{ userId: 1, keyHash: 'old-hash' }])).toEqual([{ skipped: 'the user has another API token in Latchkey' }]);
  });

  it('finds the same token present', () => {
    expect(settle(apiTokenConflicts, [token(1, 'hash')], [{ userId: 1, keyHash: 'hash' }])).toEqual(['present']);
  });

  it("skips a token whose key is another user's", () => {
    expect(settle(apiTokenConflicts, [token(2, 'hash')], [{ userId: 1, keyHash: 'hash' }])).toEqual([{ skipped: 'user 1 has the same key' }]);
  });
});

describe('admin permissions', () => {
  const grant = (userId: number, model: ImportedPermission['permission']['model'], action: ImportedPermission['permission']['action']): ImportedPermission => ({ userId, permission: { model, action } });

  it('writes a grant that comes twice (directly and through a group) once, and says why not the second', () => {
    expect(settle(adminPermissionConflicts, [grant(1, 'users.user', 'view'), grant(1, 'users.user', 'view')], [])).toEqual([
      'inserted',
      { skipped: 'the user is granted it once already (directly, through another group, or on the token model and its proxy)' },
    ]);
  });

  it('finds a grant the user holds already present', () => {
    expect(settle(adminPermissionConflicts, [grant(1, 'users.user', 'view')], [{ userId: 1, model: 'users.user', action: 'view' }])).toEqual(['present']);
  });
});
