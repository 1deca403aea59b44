import type { UserLabel } from '../account/ports.js';
import type { Authenticator, AuthenticatorType, NewAuthenticator } from './model.js';

export interface AuthenticatorRepository {
  /**
   * Throws 'authenticator_exists' when the user already has one of this type (a unique
   * constraint decides, so two parallel activations cannot both succeed; WebAuthn keys excepted)
   * or the WebAuthn credential id is registered already, 'not_found' when the user does not exist.
   */
  create(input: NewAuthenticator): Promise<Authenticator>;
  findById(id: number): Promise<Authenticator | undefined>;
  /** The WebAuthn authenticator holding this credential id, whoever's it is. */
  findByCredentialId(credentialId: string): Promise<Authenticator | undefined>;
  /** Replaces the authenticator's data (a WebAuthn key's name or sign count); false when it no longer exists. */
  updateData(id: number, data: Record<string, unknown>): Promise<boolean>;
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
  /**
   * A page of authenticators for the admin, newest first (by id), continuing after `afterId`
   * (keyset paging, no count), each with its user's login names, in one query. Their data (the
   * sealed secrets) is not read.
   */
  search(query: AuthenticatorSearch): Promise<ListedAuthenticator[]>;
}

export interface AuthenticatorSearch {
  type?: AuthenticatorType;
  userId?: number;
  /**
   * The start of the user's email, or (where there are usernames) of their username, folded as
   * usernames are compared. LIKE's wildcards match only themselves.
   */
  text?: string;
  afterId?: number;
  limit: number;
}

/** An authenticator as the admin lists it: without its data, with whose it is. */
export interface ListedAuthenticator extends Omit<Authenticator, 'data' | 'credentialId'> {
  user: UserLabel;
}
