import type { KEYED_FRONTEND_URLS} from '../config/settings.js';
import { type FrontendUrlName, type Settings } from '../config/settings.js';
import { latchkeyUrls, type LatchkeyUrls } from '../config/url-names.js';

/**
 * The links Latchkey's emails carry. By default they lead to the account pages (under URL_PREFIX);
 * a project whose people use a single-page app of its own names that app's routes in
 * HEADLESS_FRONTEND_URLS (allauth.headless's setting), and the emails lead there instead, the
 * app then calling the headless API with the key.
 *
 * Every link is absolute and built from settings alone, never from the request's Host or
 * X-Forwarded-Host: a poisoned header must not be able to send someone's reset key to a host the
 * attacker owns.
 */
type LinkSettings = Pick<Settings, 'SITE_URL' | 'HEADLESS_FRONTEND_URLS' | 'URL_PREFIX' | 'ADMIN_URL'>;

/** The account page each purpose falls back to, given the key it carries (urlFor encodes it). */
const PAGE_PATHS: Record<FrontendUrlName, (urls: LatchkeyUrls, key: string) => string> = {
  account_confirm_email: (urls, key) => urls.urlFor('account_confirm_email', { key }),
  account_reset_password: (urls) => urls.urlFor('account_reset_password'),
  account_reset_password_from_key: (urls, key) => urls.urlFor('account_reset_password_from_key', { key }),
  account_signup: (urls) => urls.urlFor('account_signup'),
  socialaccount_login_error: (urls) => urls.urlFor('socialaccount_login_error'),
};

type KeyedPurpose = (typeof KEYED_FRONTEND_URLS)[number];
type UnkeyedPurpose = Exclude<FrontendUrlName, KeyedPurpose>;

/** An absolute link to a path of this site, from SITE_URL. */
export function siteUrl(settings: Pick<Settings, 'SITE_URL'>, path: string): string {
  return new URL(path, settings.SITE_URL).toString();
}

/**
 * Where an email for this purpose should send its reader: the front end's route when
 * HEADLESS_FRONTEND_URLS names one, `{key}` replaced by the key (URL-encoded, so a key can never
 * change the URL's shape), else the account page.
 */
export function accountUrl(settings: LinkSettings, purpose: KeyedPurpose, key: string): string;
export function accountUrl(settings: LinkSettings, purpose: UnkeyedPurpose): string;
export function accountUrl(settings: LinkSettings, purpose: FrontendUrlName, key = ''): string {
  const encoded = encodeURIComponent(key);
  const frontEnd = settings.HEADLESS_FRONTEND_URLS[purpose];
  if (frontEnd !== undefined) return frontEnd.replaceAll('{key}', encoded);
  return siteUrl(settings, PAGE_PATHS[purpose](latchkeyUrls(settings), key));
}

/**
 * Where someone who already has an account signs in. allauth.headless names no front-end route
 * for it; a single-page app signs in and signs up from the same place, so its signup route
 * (account_signup) stands for it. Without one, the login page.
 */
export function signInUrl(settings: LinkSettings): string {
  return settings.HEADLESS_FRONTEND_URLS.account_signup ?? siteUrl(settings, latchkeyUrls(settings).urlFor('account_login'));
}
