/**
 * A cookiecutter-django project's account data, as `manage import-django` reads it: one type per
 * table (cookiecutter's users.User, allauth's account, socialaccount and mfa apps, Django REST
 * framework's authtoken, django.contrib.auth's permissions), with Django's column values made
 * plain (booleans as booleans, instants as Dates, JSON columns parsed), whichever source they came
 * from: the project's database or a `manage.py dumpdata` file.
 */

/** The user model's login field: cookiecutter's `username_type`. */
export type DjangoLoginField = 'username' | 'email';

/** users_user (cookiecutter's users.User: AbstractUser with `name`, and without `username` when users log in by email). */
export interface DjangoUser {
  id: number;
  /** Null when the model has no username column (username_type=email). */
  username: string | null;
  email: string;
  name: string;
  /** Django's encoded hash (`argon2$...`, `pbkdf2_sha256$...`, `bcrypt$...`, `!...` when unusable). */
  password: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  dateJoined: Date;
  lastLogin: Date | null;
  /**
   * The columns the project's own user fields come from (each field's `djangoColumn`,
   * docs/user-fields.md), by column name, as Django's dumpdata writes them whichever the source:
   * text as a string, a day as 'YYYY-MM-DD', an integer as a number, a boolean as a boolean, NULL
   * as null. A column users_user lacks is absent. What each value becomes is the import's to
   * judge (convert.ts), against the field's declaration.
   */
  projectColumns: Readonly<Record<string, unknown>>;
}

/**
 * users_user's columns beside those Latchkey's import reads: the ones the project's fields were
 * to come from, found or not, and those nothing reads, which the import names so that no column
 * is dropped unsaid (docs/migrating-from-django.md).
 */
export interface DjangoUserColumns {
  /** The columns asked for (the declared fields' djangoColumn) that users_user has. */
  project: readonly string[];
  /** The columns asked for that users_user lacks. */
  absent: readonly string[];
  /** The columns users_user has that neither Latchkey's import nor a declared field reads. */
  unread: readonly string[];
}

/** account_emailaddress. */
export interface DjangoEmailAddress {
  id: number;
  userId: number;
  email: string;
  verified: boolean;
  primary: boolean;
}

/** authtoken_token: the key is the primary key, 40 hexadecimal characters. */
export interface DjangoToken {
  key: string;
  userId: number;
  created: Date;
}

/**
 * mfa_authenticator (allauth 0.56+). `type` is `totp`, `recovery_codes` or `webauthn`; `data` is
 * the row's JSON: `{secret}` for TOTP (base32, encrypted only if the project's adapter encrypts),
 * `{seed, used_mask, migrated_codes?}` for recovery codes, `{name, credential, passwordless}` for
 * WebAuthn.
 */
export interface DjangoAuthenticator {
  id: number;
  userId: number;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date | null;
  lastUsedAt: Date | null;
}

/** socialaccount_socialapp. `providerId` and `settings` exist from allauth 0.55; older rows read as '' and {}. */
export interface DjangoSocialApp {
  id: number;
  provider: string;
  providerId: string;
  name: string;
  clientId: string;
  /** The client secret, in clear as allauth keeps it. */
  secret: string;
  key: string;
  settings: Record<string, unknown>;
}

/** socialaccount_socialaccount. `provider` is the app's provider_id when it has one, else its kind's id. */
export interface DjangoSocialAccount {
  id: number;
  userId: number;
  provider: string;
  uid: string;
  extraData: Record<string, unknown>;
  dateJoined: Date;
  lastLogin: Date;
}

/** socialaccount_socialtoken: `token` is the access token, `tokenSecret` the refresh token (OAuth2) or token secret (OAuth1). */
export interface DjangoSocialToken {
  id: number;
  appId: number | null;
  accountId: number;
  token: string;
  tokenSecret: string;
  expiresAt: Date | null;
}

/**
 * One permission a user holds in Django's admin: granted to the user directly (`group` null) or
 * through a group they are in (`group` names it). `appLabel` and `codename` as in auth_permission
 * with its content type: ('users', 'view_user'), ('authtoken', 'delete_token').
 */
export interface DjangoPermission {
  userId: number;
  appLabel: string;
  codename: string;
  group: string | null;
}

/** Each kind of row a source yields, by the name the import reports it under. */
export interface DjangoRows {
  users: DjangoUser;
  emailAddresses: DjangoEmailAddress;
  tokens: DjangoToken;
  authenticators: DjangoAuthenticator;
  socialApps: DjangoSocialApp;
  socialAccounts: DjangoSocialAccount;
  socialTokens: DjangoSocialToken;
  permissions: DjangoPermission;
}

export type DjangoKind = keyof DjangoRows;

/** In the order they are imported: every row after the rows it refers to. */
export const DJANGO_KINDS: readonly DjangoKind[] = ['users', 'emailAddresses', 'tokens', 'authenticators', 'socialApps', 'socialAccounts', 'socialTokens', 'permissions'];

/** The Django table each kind is read from (for messages, and for the database source). */
export const DJANGO_TABLES: Record<DjangoKind, string> = {
  users: 'users_user',
  emailAddresses: 'account_emailaddress',
  tokens: 'authtoken_token',
  authenticators: 'mfa_authenticator',
  socialApps: 'socialaccount_socialapp',
  socialAccounts: 'socialaccount_socialaccount',
  socialTokens: 'socialaccount_socialtoken',
  permissions: 'auth_permission',
};
