import type { User } from '../account/model.js';
import type { Settings } from '../config/settings.js';
import { latchkeyUrls } from '../config/url-names.js';
import type { ProjectUserFields } from '../core/user-fields.js';
import { cleanName, NAME_MAX_LENGTH } from '../account/names.js';
import type { SocialAccount } from './model.js';

/**
 * What a provider told us about the person signing in. Every field is optional: providers differ
 * in what they share, and a person may have withheld any of it.
 */
export interface ProviderUserData {
  email?: string;
  username?: string;
  name?: string;
  firstName?: string;
  lastName?: string;
}

/** The social sign-in being processed: which provider, the person's id there, and what it told. */
export interface SocialLogin {
  /** The provider's id, e.g. `github` or an OpenID Connect app's `provider_id`. */
  provider: string;
  /** The person's stable id at the provider (the `sub` claim, or the provider's user id). */
  uid: string;
  data: ProviderUserData;
  /**
   * Everything the provider said, as kept on the social account: an OAuth 2.0 provider's profile
   * JSON, an OpenID Connect provider's claims, a SAML IdP's attributes (each a list of values, by
   * attribute name). A project reads what Latchkey does not map here, e.g. a department.
   */
  extraData?: Readonly<Record<string, unknown>>;
}

/** A provider's answer as preSocialLogin sees it, before Latchkey acts on it. */
export interface SocialLoginAttempt extends SocialLogin {
  /** 'login': sign in (or up) with it; 'connect': add it to the signed-in user (`requester`). */
  process: 'login' | 'connect';
  /** The addresses the provider gave, each with whether it vouches for it. */
  emails: readonly { email: string; verified: boolean; primary: boolean }[];
  /** The user this provider account is connected to already (a returning person), if any. */
  connectedUser?: User;
  /** For a connect: the signed-in user connecting it. */
  requester?: User;
}

/**
 * What preSocialLogin may decide instead of letting the sign-in go on as usual: connect this
 * provider account, which nobody here has yet, to an existing user and sign in as them (allauth's
 * `sociallogin.connect(request, user)`). The login then runs that user's stages (email
 * verification, MFA) like any other; the user is told by mail that an account was connected.
 */
export interface SocialLoginDecision {
  /** The user to connect the provider account to, and sign in as. */
  connectTo: Pick<User, 'id'>;
}

/** What preSocialLogin may look up to choose a user to connect to. */
export interface SocialLoginUsers {
  /** The user whose verified address this is (an unverified claim proves nothing), or undefined. */
  withVerifiedEmail(email: string): Promise<User | undefined>;
  /** The user with this id, or undefined. */
  byId(id: number): Promise<User | undefined>;
}

/** The fields of a user about to be created from a provider's data. */
/** What populateUser gives a new person: their address, username and name, and any of the project's own fields the provider knows (docs/user-fields.md). */
export interface NewSocialUser extends Partial<ProjectUserFields> {
  /** Trimmed; empty when the provider gave none. */
  email: string;
  /** Only in projects whose users have usernames, and only when the provider gave one. */
  username?: string;
  name: string;
}

/**
 * The project's hook points into social sign-in, as allauth's DefaultSocialAccountAdapter: a
 * project subclasses it (in its users/adapters.ts) to decide who may sign up through a provider
 * and what a new account holds. The social sign-in flows of every door ask it.
 */
export class SocialAccountAdapter {
  constructor(protected readonly settings: Settings) {}

  /**
   * Whether a provider's sign-in may create a new account. By default it follows
   * ACCOUNT_ALLOW_REGISTRATION, the same switch as local signup, so closing signup closes both
   * doors; a project may decide per provider or per person.
   */
  isOpenForSignup(_login: SocialLogin): boolean | Promise<boolean> {
    return this.settings.ACCOUNT_ALLOW_REGISTRATION;
  }

  /**
   * Whether a new person may be signed up at once with what the provider gave (allauth's
   * is_auto_signup_allowed), rather than shown the signup form to confirm their address and
   * username: SOCIALACCOUNT_AUTO_SIGNUP by default. Even when it allows, an address that is
   * missing, refused by cleanEmail or already in use still leads to the form.
   */
  isAutoSignupAllowed(_login: SocialLogin): boolean | Promise<boolean> {
    return this.settings.SOCIALACCOUNT_AUTO_SIGNUP;
  }

  /**
   * The new user's fields from the provider's data. The defaults: the email as given (trimmed),
   * the username only in a project with usernames, and the name as given or else built from the
   * first and last names. A project overrides it to fill more, calling `super.populateUser` first.
   */
  populateUser(login: SocialLogin): NewSocialUser | Promise<NewSocialUser> {
    const { data } = login;
    const email = textOf(data.email);
    const username = this.settings.USERNAME_TYPE === 'username' ? textOf(data.username) : '';
    const fullName = textOf(data.name) || [textOf(data.firstName), textOf(data.lastName)].filter((part) => part !== '').join(' ');
    return { email, ...(username === '' ? {} : { username }), name: nameFromProvider(fullName) };
  }

  /**
   * Called with every provider's verified answer, before Latchkey acts on it (allauth's
   * pre_social_login): a login (an existing account's, an email match, a signup) or a connect,
   * through every door (the pages' callback, a SAML response, the headless redirect and token
   * sign-ins). Return nothing to go on as usual.
   *
   * Throw a LatchkeyError to refuse (`new LatchkeyError('permission_denied', 'message for the
   * person')`): nothing is signed in, connected or created; the pages show the message (on the
   * connections page for a connect), the headless API answers it as an error, and a front end's
   * redirect gets `?error=<code>`. Or, at a login with a provider account nobody has yet,
   * return `{ connectTo: user }` to connect it to an existing user and sign in as them (see
   * SocialLoginDecision; `users` finds one by a verified address). Connect only to a user the
   * provider's answer proves to be the same person: the login goes on as that user.
   */
  preSocialLogin(_attempt: SocialLoginAttempt, _users: SocialLoginUsers): void | SocialLoginDecision | Promise<void | SocialLoginDecision> {
    return undefined;
  }

  /**
   * Where the pages send a person once a provider account is connected to their account, when the
   * connect named no `next` of its own (allauth's get_connect_redirect_url): the connections page
   * by default. A path of this site, or an absolute URL.
   */
  getConnectRedirectUrl(_account: SocialAccount): string {
    return latchkeyUrls(this.settings).urlFor('socialaccount_connections');
  }
}

/**
 * A provider's value as trimmed text. Provider code may hand over whatever a JSON document held
 * (null, a number), so anything but a string counts as absent.
 */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * A name a provider gave, made storable. Unlike a form, where the person can correct a refused
 * name, a provider's profile is out of the person's reach here, so instead of refusing the
 * sign-in the name is fitted, as allauth does: characters that cannot be stored (a null
 * character, half of a surrogate pair) are dropped and the name is cut to NAME_MAX_LENGTH code
 * points. cleanName then applies the same rules as every other name.
 */
function nameFromProvider(raw: string): string {
  const storable = raw.replaceAll('\u0000', '').replace(/\p{Cs}/gu, '').normalize('NFC').trim();
  return cleanName([...storable].slice(0, NAME_MAX_LENGTH).join(''));
}
