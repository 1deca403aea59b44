/** "Sessions & CSRF" in docs/settings.md: the session and CSRF cookies, and the origins trusted. */
import { z } from 'zod';
import { booleanField, integerField, stringField, stringListField } from '../fields.js';
import { setting, VALUE, type SettingGroup } from './declaration.js';
import { isOrigin } from './origins.js';

// Production's cookies are sent over HTTPS only, and the session cookie's __Host- prefix keeps
// subdomains from planting or overwriting it (check --deploy warns about each).
const SESSION_SETTINGS = {
  SESSION_COOKIE_NAME: setting({
    field: stringField('a cookie name', /^[A-Za-z0-9_-]+$/),
    default: { base: 'sessionid', production: '__Host-sessionid' },
    docs: {
      allowed: 'letters, digits, `_` and `-`',
      does:
        'The name of the session cookie. Browsers accept a `__Host-` cookie only over HTTPS, with `Secure`, `Path=/` ' +
        'and no `Domain`.',
    },
  }),
  SESSION_COOKIE_AGE: setting({
    field: integerField(60),
    default: { base: 14 * 86400 },
    docs: {
      allowed: 'whole number of seconds, at least 60',
      default: `${VALUE} (14 days)`,
      does: "The longest a session can live, however active it is. Also the cookie's lifetime when the login is remembered.",
    },
  }),
  SESSION_IDLE_TIMEOUT: setting({
    field: integerField(60),
    default: { base: 7 * 86400 },
    docs: {
      allowed: 'whole number of seconds, at least 60',
      default: `${VALUE} (7 days)`,
      does: 'A session ends after this long without a request.',
    },
  }),
  SESSION_COOKIE_SECURE: setting({
    field: booleanField(),
    default: { base: false, production: true },
    docs: {
      allowed: '`true` / `false`',
      does: 'Marks the session cookie `Secure`, so browsers send it only over HTTPS.',
    },
  }),
  CSRF_COOKIE_SECURE: setting({
    field: booleanField(),
    default: { base: false, production: true },
    docs: {
      allowed: '`true` / `false`',
      does: 'Marks the `csrftoken` cookie `Secure`.',
    },
  }),
  CSRF_TRUSTED_ORIGINS: setting({
    field: stringListField('a comma-separated list of origins such as https://app.example.com', z.string().refine(isOrigin)),
    default: { base: [] },
    docs: {
      allowed: 'list of origins such as `https://app.example.com` (scheme and host, optional port, no path, no wildcards)',
      does:
        "Extra origins allowed to send state-changing requests. The origin of `SITE_URL` and the request's own origin " +
        'are always allowed.',
    },
  }),
};

export const SESSIONS: SettingGroup<typeof SESSION_SETTINGS> = { id: 'sessions', settings: SESSION_SETTINGS };
