/**
 * The storage ports: small repository interfaces shaped by the domain. Flows and services depend
 * on these, never on Kysely. One Kysely implementation serves SQLite and PostgreSQL
 * (storage/kysely/), and one conformance suite (storage/conformance.test.ts) runs it on both.
 *
 * Values handed to a repository are normalized by the domain (account/identifiers.ts), and the
 * repositories derive their comparison keys once more themselves (normalizeEmail for every email
 * column and lookup, normalizeUsernameKey for the username key), so that uniqueness never depends
 * on every caller remembering to normalize. An address that cannot be normalized is refused on
 * writes ('invalid_email') and matches nothing on lookups. The database's unique constraints are
 * the last word on uniqueness, so that parallel requests cannot both win; their refusals arrive as
 * LatchkeyErrors, never as driver errors.
 */

export type UsernameType = 'username' | 'email';

export interface User {
  id: number;
  /** The username as the person typed it (after NFKC); null when the project logs in by email. */
  username: string | null;
  /** The user's primary email address, normalized; '' when none was given (username projects only). */
  email: string;
  name: string;
  /** A Django-format encoded password hash, or an unusable marker starting with '!'. */
  password: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  dateJoined: Date;
  lastLogin: Date | null;
}

export interface NewUser {
  /** Required when the project logs in by username; must be absent otherwise. */
  username?: string;
  email: string;
  name?: string;
  password: string;
  isActive?: boolean;
  isStaff?: boolean;
  isSuperuser?: boolean;
  dateJoined: Date;
}

export type UserChanges = Partial<Pick<User, 'name' | 'email' | 'isActive' | 'isStaff' | 'isSuperuser' | 'password' | 'lastLogin'>>;

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
}

export interface EmailAddress {
  id: number;
  userId: number;
  email: string;
  verified: boolean;
  primary: boolean;
}

export interface NewEmailAddress {
  userId: number;
  email: string;
  verified: boolean;
  primary: boolean;
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
  /** The one verified row with this address, if any user has verified it. */
  findVerified(email: string): Promise<EmailAddress | undefined>;
  /** Throws 'email_taken' when another user has already verified the same address. */
  markVerified(id: number): Promise<EmailAddress | undefined>;
  /**
   * Makes the address the user's only primary one and copies it to the user's email column,
   * atomically. Returns undefined (changing nothing) when the address is not this user's; throws
   * 'email_taken' (changing nothing) when, in an email project, another user signs in with it.
   */
  setPrimary(userId: number, id: number): Promise<EmailAddress | undefined>;
  remove(id: number): Promise<boolean>;
}

export interface StoredSession {
  /** SHA-256 of the session id: the id itself is never stored, so a dump yields no live session. */
  idHash: string;
  userId: number | null;
  data: Record<string, unknown>;
  createdAt: Date;
  lastSeenAt: Date;
  /** The absolute expiry, fixed when the session is created. */
  expiresAt: Date;
  ipAddress: string;
  userAgent: string;
}

export type SessionChanges = Partial<Pick<StoredSession, 'userId' | 'data' | 'lastSeenAt' | 'expiresAt'>>;

export interface SessionRepository {
  /** Throws 'not_found' when `userId` names a user who no longer exists. */
  create(session: StoredSession): Promise<void>;
  find(idHash: string): Promise<StoredSession | undefined>;
  update(idHash: string, changes: SessionChanges): Promise<boolean>;
  delete(idHash: string): Promise<boolean>;
  /** Ends every session of the user, except the one named; returns how many ended. */
  deleteForUser(userId: number, options?: { exceptIdHash?: string }): Promise<number>;
  /** Most recently seen first. */
  listForUser(userId: number): Promise<StoredSession[]>;
  /**
   * Removes sessions whose absolute expiry is at or before `now`, and, when `idleSince` is given,
   * those last seen at or before it; returns how many.
   */
  deleteExpired(now: Date, idleSince?: Date): Promise<number>;
}

export interface AuditRecord {
  id: number;
  /** The event's name, e.g. user_logged_in (account/events.ts). */
  event: string;
  userId: number | null;
  createdAt: Date;
  ipAddress: string;
  userAgent: string;
  /** Details of the event; never a secret. */
  data: Record<string, unknown>;
}

export type NewAuditRecord = Omit<AuditRecord, 'id'>;

export interface AuditLogRepository {
  record(entry: NewAuditRecord): Promise<AuditRecord>;
  /** The user's records, newest first, at most `limit`. */
  listForUser(userId: number, limit?: number): Promise<AuditRecord[]>;
}

export const AUTHENTICATOR_TYPES = ['totp', 'recovery_codes'] as const;
export type AuthenticatorType = (typeof AUTHENTICATOR_TYPES)[number];

/**
 * A second factor of a user (allauth.mfa's Authenticator): at most one of each type per user.
 * `data` is the type's own JSON state; its secrets are encrypted by the MFA domain (mfa/) before
 * they reach a repository, so the storage layer never holds one in clear.
 */
export interface Authenticator {
  id: number;
  userId: number;
  type: AuthenticatorType;
  data: Record<string, unknown>;
  createdAt: Date;
  lastUsedAt: Date | null;
}

export interface NewAuthenticator {
  userId: number;
  type: AuthenticatorType;
  data: Record<string, unknown>;
  createdAt: Date;
}

export interface AuthenticatorRepository {
  /**
   * Throws 'authenticator_exists' when the user already has one of this type (a unique
   * constraint decides, so two parallel activations cannot both succeed), 'not_found' when the
   * user does not exist.
   */
  create(input: NewAuthenticator): Promise<Authenticator>;
  findById(id: number): Promise<Authenticator | undefined>;
  findForUser(userId: number, type: AuthenticatorType): Promise<Authenticator | undefined>;
  /** Oldest first. */
  listForUser(userId: number): Promise<Authenticator[]>;
  /** Records a successful use; false when the authenticator no longer exists. */
  markUsed(id: number, at: Date): Promise<boolean>;
  /** Removes it together with its used recovery-code marks. */
  delete(id: number): Promise<boolean>;
  /**
   * Marks recovery code number `index` of the authenticator as used, atomically: of any number
   * of parallel calls for one code exactly one returns true. False when it was already used or the
   * authenticator no longer exists (deleted or replaced by a regeneration), never a driver error.
   */
  useRecoveryCode(authenticatorId: number, index: number, at: Date): Promise<boolean>;
  /** The indexes of the authenticator's used recovery codes, ascending. */
  usedRecoveryCodes(authenticatorId: number): Promise<number[]>;
}

/**
 * A user's API token (Django REST framework's authtoken: one per user, valid until deleted). The
 * key itself is never stored: `keyHash` (a keyed hash) finds it, and `sealedKey` (the key
 * encrypted under the project's secret key) lets the login endpoint hand the same key out again.
 */
export interface ApiToken {
  userId: number;
  keyHash: string;
  sealedKey: string;
  createdAt: Date;
}

export interface ApiTokenRepository {
  /**
   * Stores the user's token unless they already have one (the database keeps one per user, so of
   * two parallel creations one wins); returns the token the user has afterwards either way.
   * Inside a transaction the token returned is held until the transaction ends, so a caller may
   * decide on it and delete it without a parallel replacement slipping in.
   */
  createIfAbsent(token: ApiToken): Promise<ApiToken>;
  findByKeyHash(keyHash: string): Promise<ApiToken | undefined>;
  /** The owner of the token with this key hash, read with it in one query (every API request asks). */
  findUserByKeyHash(keyHash: string): Promise<User | undefined>;
  findForUser(userId: number): Promise<ApiToken | undefined>;
  /** Returns whether there was one to delete. */
  deleteForUser(userId: number): Promise<boolean>;
}

/** The repositories, bound either to the database or to one open transaction. */
export interface Repositories {
  users: UserRepository;
  emailAddresses: EmailAddressRepository;
  sessions: SessionRepository;
  auditLog: AuditLogRepository;
  authenticators: AuthenticatorRepository;
  apiTokens: ApiTokenRepository;
}

export interface Store extends Repositories {
  /**
   * Runs `work` in one database transaction: it commits when `work` resolves and rolls back when
   * it throws, so a state change that spans rows is all or nothing. `work` must use only the
   * repositories it is handed: a call through the outer store, or a nested transaction(), from
   * inside `work` fails at once with an Error (on SQLite it would otherwise wait for the
   * transaction forever; on PostgreSQL it would run outside it). A refused write inside it (say 'email_taken') may be caught and
   * the transaction carried on, on PostgreSQL as on SQLite.
   */
  transaction<T>(work: (repositories: Repositories) => Promise<T>): Promise<T>;
}
