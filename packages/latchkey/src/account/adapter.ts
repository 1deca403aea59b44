import type { Kysely } from 'kysely';
import type { Settings } from '../config/settings.js';
import { latchkeyUrls } from '../config/url-names.js';
import { isSafeRedirect } from '../core/safe-url.js';
import type { ProjectUserFields } from '../core/user-fields.js';
import type { EmailMessage } from '../mail/ports.js';
import { BUILT_IN_LOGIN_STAGES, type LoginStageEntry } from './login-stages.js';
import type { User } from './model.js';
import { availableUsername, type UsernameTaken } from './usernames.js';
import { accountUrl } from './urls.js';

/** An account mail to render: its templates' common start, its reader, what the templates read. */
export interface MailToRender {
  /** `account/email/password_changed`: the templates are `<template>_subject.txt`, `_message.txt` and `_message.html`. */
  template: string;
  to: string;
  /** What the templates read, with `site_name` and `site_url` already in. */
  context: Record<string, unknown>;
}

/** Whose a new password is: the account, or at signup the account to be. */
export interface PasswordOwner {
  username: string | null;
  email: string;
}

/** Renders one of the templates (the project's folders first) with a context. */
export type RenderTemplate = (name: string, context: Record<string, unknown>) => string;

/** A new account's fields as the signup hooks see them (populateUsername, saveUser), before it is stored. */
export interface NewUserFields extends Partial<ProjectUserFields> {
  /**
   * In a project with usernames: the one given (typed, or as the provider suggested it through
   * populateUser), or undefined when the signup gave none. Always undefined in a project whose
   * users sign in by email.
   */
  username?: string;
  /** Validated and normalised; '' only when a provider's signup has none. */
  email: string;
  /** '' when nobody gave one. */
  name: string;
}

/** How a person signed up, and what they sent: what saveUser reads besides the new account's fields. */
export interface SignupSubmission {
  /**
   * 'password': the signup page or the headless auth/signup; 'passkey': a passkey signup;
   * 'provider': a provider's new person, signed up at once or through the social signup form.
   */
  method: 'password' | 'passkey' | 'provider';
  /** For a provider's signup, the provider's id. */
  provider?: string;
  /**
   * Every field of the signup form or JSON body, as sent (a form's as text; a JSON body's members
   * as they were), except any field whose name holds "password" and the CSRF token. Nothing here
   * was validated: read a field of the project's own by name and check its type. Empty for a
   * provider's signup at once, where nobody typed anything.
   */
  fields: Readonly<Record<string, unknown>>;
}

/** What saveUser decides for a new account. */
export interface UserToSave {
  /** The account's name, cleaned and refused as the profile form's (on the `name` field). */
  name: string;
  /**
   * Data of the project's own from the signup (a field of its own, a referral code): written in
   * the new account's transaction, on its `user_signed_up` audit record as `data.extra`, which
   * `latchkey.events.subscribe('user_signed_up', ...)` hands over once the account is committed.
   * A plain object that JSON can hold; never a secret (the audit trail shows it to staff).
   */
  extra?: Record<string, unknown>;
}

/**
 * The project's hook points into the account flows, as allauth's DefaultAccountAdapter: a project
 * subclasses it (in its users/adapters.ts) and passes an instance to createLatchkey. Every flow
 * that needs a decision asks the adapter, so one override changes the pages, the headless API and
 * the admin alike.
 */
export class AccountAdapter {
  constructor(protected readonly settings: Settings) {}

  /**
   * Whether a new account may be created right now. By default it follows
   * ACCOUNT_ALLOW_REGISTRATION; a project may add rules (an invitation, a time window).
   */
  isOpenForSignup(): boolean | Promise<boolean> {
    return this.settings.ACCOUNT_ALLOW_REGISTRATION;
  }

  /**
   * Further rules on an email address a person signs up with or adds, after it has been
   * validated and normalized. Return it to accept it; throw
   * `new LatchkeyError('invalid_email', 'message for the person', { param: 'email' })` to refuse.
   */
  cleanEmail(email: string): string | Promise<string> {
    return email;
  }

  /** Further rules on a username at signup, after Django's character rules. Same contract as cleanEmail. */
  cleanUsername(username: string): string | Promise<string> {
    return username;
  }

  /**
   * Further rules on a new password a person types (at signup, and to change, set or reset one),
   * after the password validators have accepted it (allauth's clean_password). Return it to
   * accept it; throw `new LatchkeyError('password_invalid', 'message for the person')` to refuse:
   * the form shows the message on the password's field. `owner` is who the password is for (at
   * signup, the account to be).
   */
  cleanPassword(password: string, _owner: PasswordOwner): string | Promise<string> {
    return password;
  }

  /**
   * The username of a new account whose signup gave none, in a project with usernames
   * (allauth's populate_username): a person signed up at once through a provider. By default
   * the provider's suggestion (`user.username`), else the address's local part, reduced to the
   * characters a username may hold, with a number added when it is taken (`ada`, `ada4821`).
   * `isTaken(username)` says whether an account has a username already.
   *
   * What it returns is then judged as a typed username is (Latchkey's rules, then cleanUsername)
   * and must be free: when it is not, the person gets the social signup form to choose one,
   * with the provider's suggestion filled in. Never called in a project whose users sign in by
   * email, nor when the person types a username.
   */
  populateUsername(user: NewUserFields, isTaken: UsernameTaken): string | Promise<string> {
    return availableUsername(isTaken, [user.username ?? '', user.email.split('@')[0] ?? '']);
  }

  /**
   * What a new account is saved with, at every signup (allauth's save_user, and its way to add
   * data at signup): the signup page, the headless auth/signup, a passkey signup, and a
   * provider's new person (at once, or through the social signup form). Asked once the address
   * and username have been judged, before anything is written (and before the password's check,
   * which compares the password with the name too), and for an address that already has an
   * account as well, so that its answer cannot tell the two apart.
   *
   * `user` is the new account's fields; `signup.fields` is everything the person sent, so a
   * field the project added to its signup template can be read here. Return the name to store and
   * any `extra` data to keep with the signup (see UserToSave); throw
   * `new LatchkeyError('invalid_input', 'message', { param: 'field' })` to refuse the signup,
   * with the message on that field of the form (a provider's signup at once goes to the social
   * signup form instead, which asks again). The default keeps the name given and nothing else.
   * Not asked for accounts made by staff in the admin or by `latchkey.users.create`.
   */
  saveUser(user: NewUserFields, _signup: SignupSubmission): UserToSave | Promise<UserToSave> {
    return { name: user.name };
  }

  /**
   * Where a completed login lands when it names no `next` of its own (allauth's
   * get_login_redirect_url), and where a signed-in person is sent from the login and signup
   * pages: LOGIN_REDIRECT_URL by default. A path of this site.
   */
  getLoginRedirectUrl(_user: User): string {
    return this.settings.LOGIN_REDIRECT_URL;
  }

  /** Where the logout page sends a person once signed out, or when they were not signed in: LOGOUT_REDIRECT_URL by default. */
  getLogoutRedirectUrl(): string {
    return this.settings.LOGOUT_REDIRECT_URL;
  }

  /**
   * Whether the browser may be sent to a target a request chose (allauth's is_safe_url): a `next`
   * on any page, a stored `next`, an IdP's RelayState, a headless `callback_url`. By default a
   * path of this site only, by Latchkey's strict rule: no other host, no scheme, nothing a browser
   * could read as another host (`//evil.com`, `/\evil.com`, encoded slashes).
   *
   * `url` is exactly what the redirect would send, in one of two forms, and nothing else ever gets
   * here: a path of this site, percent-encoded (`/orders/?page=2`), or an absolute http(s) URL as
   * the WHATWG URL parser serialises it (`https://shop.example/welcome`: lower-case host, no
   * user:password, no whitespace or control character). Return true to allow more, such as a host
   * the project owns, comparing `new URL(url).origin`, never a prefix of the string
   * (`https://shop.example.evil.net` starts with `https://shop.example`); return false to refuse a
   * target the default allows. A refused target falls back to the page's default (the login's
   * getLoginRedirectUrl, say), as a missing one does. Must not throw.
   */
  isSafeUrl(url: string): boolean {
    return isSafeRedirect(url);
  }

  /**
   * Where the pages send a person whose account is inactive, once they have proved who they are
   * (allauth's respond_user_inactive, which redirects to account_inactive): by default the
   * "account inactive" page (account_inactive), which says so. A project may send them to a page
   * of its own (how to reach support, say): a path of this site, or an absolute URL; a person who
   * still opens the account_inactive page is sent on there too. The headless API answers
   * 400 `account_inactive` whatever this says: its front end decides what to show.
   */
  getInactiveAccountUrl(): string {
    return latchkeyUrls(this.settings).urlFor('account_inactive');
  }

  /**
   * The subject line of every account mail (allauth's format_email_subject): by default
   * ACCOUNT_EMAIL_SUBJECT_PREFIX, or "[SITE_NAME] " when it is not set, before the template's
   * subject. Line breaks are removed afterwards, whatever this returns.
   */
  formatEmailSubject(subject: string): string {
    return `${this.settings.ACCOUNT_EMAIL_SUBJECT_PREFIX ?? `[${this.settings.SITE_NAME}] `}${subject}`;
  }

  /**
   * Every account mail, rendered from its templates (allauth's render_mail): override to add a
   * header, a reply-to address or a copy, starting from `super.renderMail(mail, render)`. What it
   * returns goes to the outbox, written with the change it tells of.
   */
  renderMail(mail: MailToRender, render: RenderTemplate): EmailMessage {
    return {
      to: [mail.to],
      subject: this.formatEmailSubject(render(`${mail.template}_subject.txt`, mail.context)),
      text: render(`${mail.template}_message.txt`, mail.context),
      html: render(`${mail.template}_message.html`, mail.context),
    };
  }

  /**
   * The link an address confirmation mail carries (allauth's get_email_confirmation_url): by
   * default the confirmation page, or the front end's route from HEADLESS_FRONTEND_URLS. Absolute,
   * and built from settings, never from a request's Host header.
   */
  getEmailConfirmationUrl(key: string): string {
    return accountUrl(this.settings, 'account_confirm_email', key);
  }

  /**
   * Called as every login begins, once its first factor is proved and before any stage (allauth's
   * pre_login), through every door: the pages, the admin, a provider, the headless API and the
   * token API. Throw `new LatchkeyError('permission_denied', 'message for the person')` to refuse
   * the login: the door shows the message as it shows a refused login, and nothing is signed in.
   * An inactive account never gets here.
   */
  preLogin(_user: User): void | Promise<void> {
    return undefined;
  }

  /**
   * The stages every login runs after its first factor, in order (allauth's get_login_stages).
   * Add a stage of the project's own with `[...super.getLoginStages(), acceptTerms]`. Every
   * built-in stage must stay in the list: createLatchkey refuses a list without one, since
   * leaving out (say) mfa_authenticate would let a password alone sign in to an account with a
   * second factor. Asked as each login runs its stages; checked as Latchkey starts.
   */
  getLoginStages(): readonly LoginStageEntry[] {
    return BUILT_IN_LOGIN_STAGES;
  }

  /**
   * Inside the transaction that creates an account, whichever way (the signup page, the headless
   * signup, a provider's signup, the admin, createsuperuser, `latchkey.users.create`): write the
   * project's rows for the new user (a first team, a profile) through `db`, the transaction's
   * (typed by `db.withTables<ProjectTables>()`), so that they commit with the account or not at
   * all. A throw refuses the whole account. Write only through `db`: a signup for an address that
   * has an account rehearses the work on a stand-in account and rolls it back (so that its answer
   * takes as long), calling this too. Not called by `manage import-django`, which copies rows, not
   * signups (docs/project-data.md).
   */
  onUserCreated(_user: User, _db: Kysely<object>): void | Promise<void> {
    return undefined;
  }

  /**
   * Inside the transaction that deactivates an account (the admin, `latchkey.users.deactivate`),
   * after its sessions and API token are gone: what the project's rows should do (close the
   * person's open orders, hand a team to someone else). A throw leaves the account active.
   */
  onUserDeactivated(_user: User, _db: Kysely<object>): void | Promise<void> {
    return undefined;
  }

  /**
   * Inside the transaction that deletes an account, before its row goes: delete or hand over the
   * project's rows that refer to it (a foreign key `on delete cascade` does it without code). A
   * throw keeps the account.
   */
  onUserDeleting(_user: User, _db: Kysely<object>): void | Promise<void> {
    return undefined;
  }
}
