import type { User } from '../account/model.js';
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
}
