/**
 * Every account page's name and path: allauth's URL names (its `reverse('account_login')`), so a
 * project, a template or a mail names a page and never spells its path. The doors register their
 * routes from this table and links are made with urlFor, so that a page's path is written once.
 * docs/extending.md, "Route names", lists them.
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
  mfa_login_webauthn: '/accounts/2fa/webauthn/login/',
  mfa_reauthenticate_webauthn: '/accounts/2fa/webauthn/reauthenticate/',
  mfa_signup_webauthn: '/accounts/2fa/webauthn/signup/',
  socialaccount_connections: '/accounts/3rdparty/',
  socialaccount_signup: '/accounts/3rdparty/signup/',
  socialaccount_login_error: '/accounts/3rdparty/login/error/',
  socialaccount_login_cancelled: '/accounts/3rdparty/login/cancelled/',
} as const;

/** The name of an account page (allauth's URL name). */
export type UrlName = keyof typeof ACCOUNT_URLS;

/** What a path needs filled in: `{ key }` for the two pages a mailed link leads to. */
export type UrlParams = Readonly<Record<string, string | number>>;

/**
 * The path of the page `name` (allauth's `reverse`), its `:params` filled in and encoded, so that a
 * value can never change the path's shape; `query` is added when given (`{ next: '/orders/' }`).
 * Throws on a parameter the path needs and was not given: a link missing its key is a bug, not a page.
 */
export function urlFor(name: UrlName, params: UrlParams = {}, query: Readonly<Record<string, string>> = {}): string {
  const path = ACCOUNT_URLS[name].replace(/:([a-z]+)/g, (_whole, param: string) => {
    const value = params[param];
    if (value === undefined) throw new Error(`urlFor('${name}') needs the parameter ${param}.`);
    return encodeURIComponent(String(value));
  });
  // encodeURIComponent rather than URLSearchParams: the same bytes the pages have always sent (a
  // space as %20, a ~ as itself), so a `next` reads back exactly.
  const search = Object.entries(query).map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return search.length === 0 ? path : `${path}?${search.join('&')}`;
}
