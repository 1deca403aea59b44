/**
 * The account's storage ports: small repository interfaces shaped by the domain. Flows and
 * services depend on these, never on Kysely. One Kysely implementation serves SQLite and
 * PostgreSQL (storage/kysely/), and one conformance suite (testing/conformance/, run by
 * storage/conformance.test.ts) holds it to them on both.
 *
 * Values handed to a repository are normalized by the domain (core/identifiers.ts), and the
 * repositories derive their comparison keys once more themselves (normalizeEmail for every email
 * column and lookup, normalizeUsernameKey for the username key), so that uniqueness never depends
 * on every caller remembering to normalize. An address that cannot be normalized is refused on
 * writes ('invalid_email') and matches nothing on lookups. The database's unique constraints are
 * the last word on uniqueness, so that parallel requests cannot both win; their refusals arrive as
 * LatchkeyErrors, never as driver errors.
 */
import type { AuditRecord, EmailAddress, NewAuditRecord, NewEmailAddress, NewUser, User, UserChanges } from './model.js';

export interface UserRepository {
  /**
   * Throws LatchkeyError 'username_taken' or 'email_taken' when a unique constraint refuses it;
   * 'invalid_username' when a username project gets no username, 'invalid_input' when an email
   * project gets one, and 'invalid_email' for an address that cannot be normalized (or an empty
   * one in an email project).
   */
  create(input: NewUser): Promise<User>;
  findById(id: number): Promise<User | undefined>;
  /** Matches on the normalized (NFKC, case-folded) form of the username. */
  findByUsername(username: string): Promise<User | undefined>;
  /**
   * Matches the user's own (primary) email column. In username projects several users may share
   * an address; the oldest account (lowest id) is returned.
   */
  findByEmail(email: string): Promise<User | undefined>;
  /** Throws 'email_taken' when the change would break the email's uniqueness. */
  update(id: number, changes: UserChanges): Promise<User | undefined>;
  /**
   * Replaces the password only if it is still `expected`: a rehash on login must not overwrite a
   * password that a concurrent password change has just set. Returns whether it was replaced.
   */
  replacePassword(id: number, expected: string, replacement: string): Promise<boolean>;
  delete(id: number): Promise<boolean>;
  count(): Promise<number>;
  /**
   * A page of users for the admin's list in `order`, continuing after `afterId` (keyset paging on
   * the sort value and the id: each page costs the same however deep it is, with no count).
   * Throws 'invalid_input' for the username order where users have no username.
   */
  search(query: UserSearch): Promise<User[]>;
}

/** What the admin's users list sorts by. Text sorts in lower case, by code point. */
export type UserSortField = 'username' | 'email' | 'name' | 'date_joined' | 'id';

/** A field ascending, or descending after a '-' (Django admin's spelling); equal values in id order, reversed too. */
export type UserOrder = UserSortField | `-${UserSortField}`;

export interface UserSearch {
  /**
   * The start, in any case, of a username (folded as usernames are compared), of an email
   * address, of the name, or of the name after its first space ("love" finds "Ada Lovelace"),
   * and of each of the project's fields the admin searches (`admin.search`, docs/user-fields.md).
   */
  text?: string;
  isStaff?: boolean;
  isSuperuser?: boolean;
  isActive?: boolean;
  /** The project's fields the admin filters by (`admin.filter`), each equal to a value: a boolean's, or a choice's stored value. */
  userFields?: Readonly<Record<string, string | boolean>>;
  order: UserOrder;
  /**
   * The previous page's last user: the page starts after it in `order`. If that user has since
   * been deleted, its place is gone and the page is empty (unless the order is by id).
   */
  afterId?: number;
  limit: number;
}

export interface EmailAddressRepository {
  /**
   * Throws 'email_taken' when this user already has the address, or when it is verified and
   * another user has it verified; 'not_found' when the user does not exist. When `primary` is set,
   * the user's other addresses stop being primary and the address is copied to the user's email
   * column, in the same transaction (as setPrimary does).
   */
  add(input: NewEmailAddress): Promise<EmailAddress>;
  findById(id: number): Promise<EmailAddress | undefined>;
  findForUser(userId: number, email: string): Promise<EmailAddress | undefined>;
  /** The primary address first, then the others oldest first. */
  listForUser(userId: number): Promise<EmailAddress[]>;
  /** Every row with this address, whichever user holds it, oldest first. */
  listByEmail(email: string): Promise<EmailAddress[]>;
  /**
   * Inside a transaction: waits until no other transaction holds a claim on this address, and
   * holds one until this transaction ends, so that what it reads of the address afterwards
   * includes every signup committed meanwhile, on any instance. PostgreSQL takes an advisory lock
   * on the address; SQLite has nothing to do (its transactions begin IMMEDIATE: one writer at a time).
   */
  claimAddress(email: string): Promise<void>;
  /** The one verified row with this address, if any user has verified it. */
  findVerified(email: string): Promise<EmailAddress | undefined>;
  /**
   * Throws 'email_taken' when another user has already verified the same address. With
   * `unverifiedOnly`, an address that is verified already is left alone and undefined comes back:
   * of two uses of one confirmation key at once (on two instances, say), exactly one confirms.
   */
  markVerified(id: number, options?: { unverifiedOnly?: boolean }): Promise<EmailAddress | undefined>;
  /**
   * Makes the address the user's only primary one and copies it to the user's email column,
   * atomically. Returns undefined (changing nothing) when the address is not this user's; throws
   * 'email_taken' (changing nothing) when, in an email project, another user signs in with it.
   */
  setPrimary(userId: number, id: number): Promise<EmailAddress | undefined>;
  remove(id: number): Promise<boolean>;
  /**
   * A page of addresses for the admin's list, newest first (by id), continuing after `afterId`
   * (keyset paging: each page costs the same however deep it is, with no count), each with its
   * user's login names, all in one query.
   */
  search(query: EmailAddressSearch): Promise<ListedEmailAddress[]>;
}

export interface EmailAddressSearch {
  /**
   * The start of the address, or of its user's email, or (where there are usernames) of its
   * user's username, folded as usernames are compared. LIKE's wildcards match only themselves.
   */
  text?: string;
  primary?: boolean;
  verified?: boolean;
  /** Only these addresses (a bulk action's selection); more than a page's worth is the caller's to avoid. */
  ids?: readonly number[];
  afterId?: number;
  limit: number;
}

/** Who a listed row belongs to, for display. */
export type UserLabel = Pick<User, 'id' | 'username' | 'email'>;

export interface ListedEmailAddress extends EmailAddress {
  user: UserLabel;
}

export interface AuditLogRepository {
  record(entry: NewAuditRecord): Promise<AuditRecord>;
  /** The user's records, newest first, at most `limit`. */
  listForUser(userId: number, limit?: number): Promise<AuditRecord[]>;
  /**
   * A page of the trail for the admin, newest first (by id), continuing after `afterId` (keyset
   * paging, no count), each with the login names of its user and of the user it was made to while
   * they exist (null for none or a deleted user), all in one query.
   */
  search(query: AuditSearch): Promise<ListedAuditRecord[]>;
}

export interface AuditSearch {
  /** The records about this user: those recorded against them, and the admin changes made to them. */
  userId?: number;
  /** One event's name (account/events.ts). */
  event?: string;
  afterId?: number;
  limit: number;
}

export interface ListedAuditRecord extends AuditRecord {
  user: UserLabel | null;
  /** The user an admin change was made to. */
  targetUser: UserLabel | null;
}
