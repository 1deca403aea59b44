/**
 * Every page's name and path: allauth's URL names (its `reverse('account_login')`) for the account
 * pages, Django's for the admin's, so that a project, a template or a mail names a page and never
 * spells its path. The doors register their routes from these tables and links are made from them
 * (urlFor, LatchkeyUrls), so that a page's path is written once. docs/extending.md, "Route names",
 * lists them.
 */
export const ACCOUNT_URLS = {
  account_login: '/accounts/login/',
  account_logout: '/accounts/logout/',
  account_signup: '/accounts/signup/',
  account_signup_by_passkey: '/accounts/signup/passkey/',
  account_inactive: '/accounts/inactive/',
  account_reauthenticate: '/accounts/reauthenticate/',
  account_request_login_code: '/accounts/login/code/',
  account_confirm_login_code: '/accounts/login/code/confirm/',
  /** A login stage of the project's own (account/login-stages.ts), by its id. */
  account_login_stage: '/accounts/login/stage/:id/',
  account_email: '/accounts/email/',
  account_email_verification_sent: '/accounts/confirm-email/',
  account_confirm_email: '/accounts/confirm-email/:key/',
  account_change_password: '/accounts/password/change/',
  account_set_password: '/accounts/password/set/',
  account_reset_password: '/accounts/password/reset/',
  account_reset_password_done: '/accounts/password/reset/done/',
  account_reset_password_from_key: '/accounts/password/reset/key/:key/',
  account_reset_password_from_key_done: '/accounts/password/reset/key/done/',
  usersessions_list: '/accounts/sessions/',
  mfa_index: '/accounts/2fa/',
  mfa_authenticate: '/accounts/2fa/authenticate/',
  mfa_reauthenticate: '/accounts/2fa/reauthenticate/',
  mfa_activate_totp: '/accounts/2fa/totp/activate/',
  mfa_deactivate_totp: '/accounts/2fa/totp/deactivate/',
  mfa_view_recovery_codes: '/accounts/2fa/recovery-codes/',
  mfa_generate_recovery_codes: '/accounts/2fa/recovery-codes/generate/',
  mfa_download_recovery_codes: '/accounts/2fa/recovery-codes/download/',
  mfa_list_webauthn: '/accounts/2fa/webauthn/',
  mfa_add_webauthn: '/accounts/2fa/webauthn/add/',
  /** A security key of the signed-in user's, by its id: renamed (allauth's edit page) and removed. */
  mfa_edit_webauthn: '/accounts/2fa/webauthn/keys/:id/edit/',
  mfa_remove_webauthn: '/accounts/2fa/webauthn/keys/:id/remove/',
  mfa_login_webauthn: '/accounts/2fa/webauthn/login/',
  mfa_reauthenticate_webauthn: '/accounts/2fa/webauthn/reauthenticate/',
  mfa_signup_webauthn: '/accounts/2fa/webauthn/signup/',
  socialaccount_connections: '/accounts/3rdparty/',
  socialaccount_signup: '/accounts/3rdparty/signup/',
  socialaccount_login_error: '/accounts/3rdparty/login/error/',
  socialaccount_login_cancelled: '/accounts/3rdparty/login/cancelled/',
  /**
   * A provider's login and callback. allauth names them per provider (`google_login`,
   * `google_callback`: `<provider>_login`, `<provider>_callback`); here one name serves every
   * provider, whose URL segment (its id, or its kind's slug: `amazon-cognito`) is `:provider`.
   */
  socialaccount_provider_login: '/accounts/:provider/login/',
  socialaccount_provider_callback: '/accounts/:provider/login/callback/',
  /** Latchkey's own: where a provider's cross-site form_post callback is finished, same-site (http/kit/parked-post.ts). */
  socialaccount_provider_callback_finish: '/accounts/:provider/login/callback/finish/',
  /** An OpenID Connect app's (allauth's `openid_connect_login` and `openid_connect_callback`, its provider_id as `:provider`). */
  openid_connect_login: '/accounts/oidc/:provider/login/',
  openid_connect_callback: '/accounts/oidc/:provider/login/callback/',
  openid_connect_callback_finish: '/accounts/oidc/:provider/login/callback/finish/',
  /** A SAML app's, by its organisation slug (allauth's names; its `organization_slug` is `:organization`). */
  saml_login: '/accounts/saml/:organization/login/',
  saml_acs: '/accounts/saml/:organization/acs/',
  saml_finish_acs: '/accounts/saml/:organization/acs/finish/',
  saml_sls: '/accounts/saml/:organization/sls/',
  saml_metadata: '/accounts/saml/:organization/metadata/',
  /** Django's set_language: the language switch posts here (http/pages/set-language.ts). */
  set_language: '/i18n/setlang/',
  /** allauth's dummy provider's stand-in authorization page (never in production). */
  dummy_authenticate: '/accounts/dummy/authenticate/',
} as const;

/**
 * The admin's pages (Django admin's URL names), relative to ADMIN_URL: `admin:login` is
 * `<ADMIN_URL>login/`. A model's pages are Django's `admin:<app>_<model>_changelist`, `_add`,
 * `_change` and `_delete` under one name each, the app and model as parameters:
 * `urlFor('admin:model_change', { app: 'users', model: 'user', id: 7 })`. (Django's
 * `admin:password_change`, staff changing their own password, has no page here: staff change
 * theirs at `account_change_password`, as everyone does.)
 */
export const ADMIN_URLS = {
  'admin:index': '',
  'admin:login': 'login/',
  'admin:logout': 'logout/',
  'admin:model_changelist': ':app/:model/',
  'admin:model_add': ':app/:model/add/',
  'admin:model_change': ':app/:model/:id/change/',
  'admin:model_delete': ':app/:model/:id/delete/',
  /** Django's `admin:auth_user_password_change`, for this project's user model (app `users`): set or remove a user's password. */
  'admin:users_user_password_change': 'users/user/:id/password/',
  /** Latchkey's own: end every session of one user, from their change page. */
  'admin:users_user_sessions_end': 'users/user/:id/sessions/end/',
  /** Latchkey's own: end every session of one user, from the sessions list. */
  'admin:sessions_session_user_delete': 'sessions/session/user/:id/delete/',
} as const;

/** The name of an account page (allauth's URL name). */
export type UrlName = keyof typeof ACCOUNT_URLS;

/** The name of an admin page (Django admin's URL name, `admin:...`). */
export type AdminUrlName = keyof typeof ADMIN_URLS;

/** Any page's name: an account page's or the admin's. */
export type RouteName = UrlName | AdminUrlName;

/** What a path needs filled in: `{ key }` for the two pages a mailed link leads to, `{ app, model, id }` for an admin model's page. */
export type UrlParams = Readonly<Record<string, string | number>>;

/** A query to add to a link (`{ next: '/orders/' }`). */
export type UrlQuery = Readonly<Record<string, string>>;

const PARAMETER = /:([a-z]+)/g;

/** `path` with its `:params` filled in and encoded; a parameter not given throws, unless `leaveMissing` (a route's own `:id`, for the router). */
function filled(name: string, path: string, params: UrlParams, leaveMissing: boolean): string {
  return path.replace(PARAMETER, (whole, param: string) => {
    const value = params[param];
    if (value === undefined) {
      if (leaveMissing) return whole;
      throw new Error(`urlFor('${name}') needs the parameter ${param}.`);
    }
    return encodeURIComponent(String(value));
  });
}

function withQuery(path: string, query: UrlQuery): string {
  // encodeURIComponent rather than URLSearchParams: the same bytes the pages have always sent (a
  // space as %20, a ~ as itself), so a `next` reads back exactly.
  const search = Object.entries(query).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return search.length === 0 ? path : `${path}?${search.join('&')}`;
}

/**
 * The path of the account page `name` (allauth's `reverse`), its `:params` filled in and encoded, so
 * that a value can never change the path's shape; `query` is added when given (`{ next: '/orders/' }`).
 * Throws on a parameter the path needs and was not given: a link missing its key is a bug, not a page.
 * The path is relative to where Latchkey is mounted: a project that sets URL_PREFIX links with
 * `latchkey.urlFor`, which adds it.
 */
export function urlFor(name: UrlName, params: UrlParams = {}, query: UrlQuery = {}): string {
  return withQuery(filled(name, ACCOUNT_URLS[name], params, false), query);
}

/** Whether `name` is a page's name (an account page's or the admin's): for names that come from a template or a project. */
export function isRouteName(name: unknown): name is RouteName {
  return typeof name === 'string' && (Object.hasOwn(ACCOUNT_URLS, name) || Object.hasOwn(ADMIN_URLS, name));
}

/**
 * One Latchkey's paths, from its settings: where its routes are registered and what its links say.
 * Made once per Latchkey (`deps.urls`, `latchkey.urlFor`, the templates' `url()`).
 *
 * A project may mount all of Latchkey under URL_PREFIX (`/auth`): the plugin then registers every
 * route inside a Fastify scope with that prefix, so a route is registered at its path in the
 * tables (`route`), and every link, redirect, form action, mailed link and Location carries the
 * prefix (`urlFor`, `mounted`).
 */
export interface LatchkeyUrls {
  /** URL_PREFIX: where all of Latchkey is mounted, `''` at the site's root, else `/auth` (no trailing slash). */
  readonly prefix: string;
  /** A page's link: URL_PREFIX and its path, `:params` filled in and encoded (each one the path needs must be given), and `query` added. */
  urlFor(name: RouteName, params?: UrlParams, query?: UrlQuery): string;
  /**
   * The path a page's routes are registered at, inside the plugin's scope (under URL_PREFIX).
   * `params` given are filled in (an admin model's `{ app, model }`); the others stay `:name`, for
   * the router to read (`:id`).
   */
  route(name: RouteName, params?: UrlParams): string;
  /** The link to a path of Latchkey's that has no page name (the headless API, `/api/`): URL_PREFIX and the path. */
  mounted(path: string): string;
  /** The link to one of Latchkey's own static files (`latchkey.css`), as Django's `{% static %}`. */
  static(file: string): string;
}

/** Where Latchkey's own static files (its CSS, its WebAuthn script) are served, under URL_PREFIX. */
export const STATIC_PATH = '/static/latchkey/';

/** What one Latchkey's paths depend on: where the admin is (ADMIN_URL) and where all of it is mounted (URL_PREFIX). */
export interface UrlSettings {
  readonly ADMIN_URL: string;
  readonly URL_PREFIX: string;
}

/** The paths of a Latchkey with these settings. */
export function latchkeyUrls(settings: UrlSettings): LatchkeyUrls {
  const prefix = settings.URL_PREFIX;
  const adminRoot = `/${settings.ADMIN_URL}`;
  const pathOf = (name: RouteName): string => {
    if (Object.hasOwn(ACCOUNT_URLS, name)) return ACCOUNT_URLS[name as UrlName];
    if (Object.hasOwn(ADMIN_URLS, name)) return `${adminRoot}${ADMIN_URLS[name as AdminUrlName]}`;
    throw new Error(`No page is named ${String(name)}.`);
  };
  return {
    prefix,
    urlFor: (name, params = {}, query = {}) => withQuery(`${prefix}${filled(name, pathOf(name), params, false)}`, query),
    route: (name, params = {}) => filled(name, pathOf(name), params, true),
    mounted: (path) => `${prefix}${path}`,
    static: (file) => `${prefix}${STATIC_PATH}${file.replace(/^\/+/, '')}`,
  };
}
