import type { User } from '../account/model.js';
import type { UserLabel } from '../account/ports.js';
import type { ApiToken } from './model.js';

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
  /**
   * A page of tokens for the admin, by user id, newest user first, continuing after
   * `afterUserId` (keyset paging on the primary key, no count), each with its user's login names,
   * in one query. Neither the key's hash nor its sealed copy is read.
   */
  search(query: ApiTokenSearch): Promise<ListedApiToken[]>;
}

export interface ApiTokenSearch {
  /**
   * The start of the user's email, or (where there are usernames) of their username, folded as
   * usernames are compared. LIKE's wildcards match only themselves.
   */
  text?: string;
  afterUserId?: number;
  limit: number;
}

/** A token as the admin lists it: whose, and since when; never the key in any form. */
export interface ListedApiToken extends Pick<ApiToken, 'userId' | 'createdAt'> {
  user: UserLabel;
}
