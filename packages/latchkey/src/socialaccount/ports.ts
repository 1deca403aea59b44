import type { UserLabel } from '../account/ports.js';
import type { NewSocialAccount, NewSocialApp, NewSocialToken, SocialAccount, SocialApp, SocialToken } from './model.js';

export interface SocialAppRepository {
  /** Throws 'social_app_exists' when an app with the same provider and providerId exists. */
  create(input: NewSocialApp): Promise<SocialApp>;
  /** Every app, by provider then providerId then id. */
  list(): Promise<SocialApp[]>;
  findById(id: number): Promise<SocialApp | undefined>;
  /**
   * Changes the given fields of the app and returns it as it now is; undefined when it does not
   * exist. Throws 'social_app_exists' when the changed provider and providerId are another app's
   * (the unique constraint decides, so two parallel changes cannot both take one pair).
   */
  update(id: number, changes: Partial<NewSocialApp>): Promise<SocialApp | undefined>;
  /**
   * Removes it; its stored tokens stay with their accounts, detached (appId becomes null). An
   * account that already has a detached token keeps that one and loses the app's, so that it
   * still has at most one per app.
   */
  delete(id: number): Promise<boolean>;
}

export interface SocialAccountRepository {
  /**
   * Throws 'social_account_exists' when (provider, uid) is already connected, to this user or
   * another (a unique constraint decides, so two parallel connects cannot both succeed), and
   * 'not_found' when the user does not exist.
   */
  create(input: NewSocialAccount): Promise<SocialAccount>;
  find(provider: string, uid: string): Promise<SocialAccount | undefined>;
  findById(id: number): Promise<SocialAccount | undefined>;
  /** How many accounts there are at `provider` (an app's providerId, or a kind's id). */
  countForProvider(provider: string): Promise<number>;
  /** Oldest first. */
  listForUser(userId: number): Promise<SocialAccount[]>;
  /**
   * The same, in a transaction, holding the user's row until it ends (PostgreSQL; SQLite has one
   * writer at a time anyway): two concurrent disconnects then decide one after the other, so they
   * cannot both see "another way in remains" and leave none.
   */
  listForUserLocked(userId: number): Promise<SocialAccount[]>;
  /** Records a login: the provider's latest data and the time. False when it no longer exists. */
  recordLogin(id: number, extraData: Record<string, unknown>, at: Date): Promise<boolean>;
  /** Removes it with its tokens. */
  delete(id: number): Promise<boolean>;
  /**
   * A page of accounts for the admin, newest first (by id), continuing after `afterId` (keyset
   * paging, no count), each with its user's login names, in one query. Their extra data is not read.
   */
  search(query: SocialAccountSearch): Promise<ListedSocialAccount[]>;
}

export interface SocialAccountSearch {
  /** The account's provider (an app's providerId, or a kind's id), exactly. */
  provider?: string;
  /**
   * The start of the uid (exactly, case included), or of the user's email, or (where there are
   * usernames) of their username, folded as usernames are compared. LIKE's wildcards match only
   * themselves.
   */
  text?: string;
  afterId?: number;
  limit: number;
}

/** A social account as the admin lists it: without the provider's data, with whose it is. */
export interface ListedSocialAccount extends Omit<SocialAccount, 'extraData'> {
  user: UserLabel;
}

export interface SocialTokenRepository {
  /**
   * Stores the account's token for the app, replacing the one it had (by account and app, a null
   * app matching a null app). A refresh token is kept when the new token brings none, as allauth
   * does: pass an empty sealedTokenSecret to keep the stored one. The replaced token's id stays.
   * Parallel saves for one account and app leave one token. Throws 'not_found' when the account
   * (or the app) does not exist.
   */
  save(input: NewSocialToken): Promise<SocialToken>;
  /** Oldest first. */
  listForAccount(accountId: number): Promise<SocialToken[]>;
  /**
   * A page of tokens for the admin, newest first (by id), continuing after `afterId` (keyset
   * paging, no count), each with its account's provider and user and its app's name, in one query.
   * Only whether a token is set is read, never the sealed values.
   */
  search(query: SocialTokenSearch): Promise<ListedSocialToken[]>;
}

export interface SocialTokenSearch {
  /** The provider of the token's account, exactly. */
  provider?: string;
  accountId?: number;
  afterId?: number;
  limit: number;
}

/** A stored token as the admin lists it: whose and which app's, whether each part is set; no value. */
export interface ListedSocialToken {
  id: number;
  accountId: number;
  /** The account's provider (an app's providerId, or a kind's id). */
  provider: string;
  /** Null for an app from the settings (or one deleted since). */
  appId: number | null;
  /** The database app's name; null when appId is. */
  appName: string | null;
  user: UserLabel;
  hasAccessToken: boolean;
  hasRefreshToken: boolean;
  expiresAt: Date | null;
}
