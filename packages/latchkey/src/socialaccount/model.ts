/**
 * Social sign-in's entities (allauth.socialaccount's SocialApp, SocialAccount and SocialToken).
 * Secrets (an application's client secret, a stored access or refresh token) are encrypted by the
 * socialaccount domain before they reach a repository, so the storage layer never holds one in
 * clear: the `sealed*` fields hold core/encryption.ts's ciphertext.
 */

/** The longest uid a provider may give (allauth's SOCIALACCOUNT_UID_MAX_LENGTH). */
export const UID_MAX_LENGTH = 191;

/**
 * A provider application stored in the database (the admin's or the CLI's), beside those from
 * SOCIALACCOUNT_PROVIDERS. `provider` is the kind's id (`openid_connect`, `github`);
 * `providerId` names one app of a kind that has several (an OpenID Connect server), and is then
 * what URLs and social accounts carry.
 */
export interface SocialApp {
  id: number;
  provider: string;
  providerId: string;
  name: string;
  clientId: string;
  /** The client secret, encrypted (core/encryption.ts); empty when the app has none. */
  sealedSecret: string;
  /** A second key some providers need (Apple's team id); not a secret. */
  key: string;
  /** The app's own settings (`server_url`, `scope`, `hidden`, ...), as allauth's JSON field. */
  settings: Record<string, unknown>;
}

export type NewSocialApp = Omit<SocialApp, 'id'>;

/**
 * A user's account at a provider, identified by (provider, uid) alone, never by email.
 * `provider` is the app's `providerId` when it has one, else its kind's id.
 */
export interface SocialAccount {
  id: number;
  userId: number;
  provider: string;
  uid: string;
  /** What the provider said at the last login (for OpenID Connect: `{userinfo, id_token}`). */
  extraData: Record<string, unknown>;
  dateJoined: Date;
  lastLogin: Date;
}

export type NewSocialAccount = Omit<SocialAccount, 'id'>;

/**
 * A provider's tokens for a social account, kept only with SOCIALACCOUNT_STORE_TOKENS: at most one
 * per account and app. `appId` is null for an app from the settings, which has no row.
 */
export interface SocialToken {
  id: number;
  accountId: number;
  appId: number | null;
  /** The access token, encrypted. */
  sealedToken: string;
  /** The refresh token, encrypted; empty when the provider gave none. */
  sealedTokenSecret: string;
  expiresAt: Date | null;
}

export type NewSocialToken = Omit<SocialToken, 'id'>;

/**
 * Whom a SAML sign-in was for, in the IdP's words, and which of the IdP's sessions it came
 * through: the signed assertion's NameID with the attributes that qualify it, and its
 * AuthnStatement's SessionIndex. A session signed in by it keeps it, so that the IdP's single
 * logout ends that session only when it names it (docs/saml.md).
 */
export interface SamlSubject {
  nameId: string;
  /** NameID@Format, as the assertion gave it (absent: unspecified). */
  format?: string;
  /** NameID@NameQualifier (absent: the IdP's own namespace). */
  nameQualifier?: string;
  /** NameID@SPNameQualifier (absent: the service provider's own namespace). */
  spNameQualifier?: string;
  sessionIndex?: string;
}
