import type { Settings } from '../config/settings.js';

/**
 * Whether a login is remembered: its session cookie lasts SESSION_COOKIE_AGE, where a login not
 * remembered gets a cookie that ends with the browser session. Decided once, as the login begins,
 * and kept with a login that stops at a stage, so that whichever door finishes it finishes it the
 * same way. ACCOUNT_SESSION_REMEMBER is the source of truth:
 * - `true` remembers every login and `false` none, whatever the door;
 * - `null` asks: the password form shows a "remember me" box, unticked at first, and its answer
 *   decides (an unticked box is `false`).
 * A login that was asked nothing (a code, a passkey, a provider, a signup, the headless API, the
 * admin's form) is remembered, as allauth's is: only its login form sets a session's expiry, so
 * every other login keeps Django's default session, which lasts SESSION_COOKIE_AGE.
 */
const REMEMBERED_WHEN_NOT_ASKED = true;

/** Whether the login is remembered, given the person's answer to "remember me" where they were asked. */
export function remembersLogin(settings: Pick<Settings, 'ACCOUNT_SESSION_REMEMBER'>, answer?: boolean): boolean {
  return settings.ACCOUNT_SESSION_REMEMBER ?? answer ?? REMEMBERED_WHEN_NOT_ASKED;
}
