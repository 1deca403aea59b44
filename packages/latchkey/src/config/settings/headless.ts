/** "Headless API" in docs/settings.md: allauth.headless, for a front end of the project's own. */
import { z } from 'zod';
import { booleanField, jsonObjectField, stringListField } from '../fields.js';
import { setting, type SettingGroup } from './declaration.js';
import { isOrigin } from './origins.js';

/**
 * The single-page app's routes that Latchkey's emails link to when it serves a front end of its
 * own (allauth's HEADLESS_FRONTEND_URLS): absolute URLs, `{key}` standing for the mailed key.
 * `socialaccount_login_error` is where a provider's callback sends the browser when it cannot tell
 * which front end started the sign-in (its state is unknown, used or expired).
 */
export const FRONTEND_URL_NAMES = ['account_confirm_email', 'account_reset_password', 'account_reset_password_from_key', 'account_signup', 'socialaccount_login_error'] as const;
export type FrontendUrlName = (typeof FRONTEND_URL_NAMES)[number];
/** The purposes whose link carries a key, and so whose front-end URL must say where it goes (`{key}`). */
export const KEYED_FRONTEND_URLS = ['account_confirm_email', 'account_reset_password_from_key'] as const satisfies readonly FrontendUrlName[];
const frontendUrlsSchema = z.partialRecord(z.enum(FRONTEND_URL_NAMES), z.string().regex(/^https?:\/\/[^\s/?#]+(\/\S*)?$/));

// allauth.headless's defaults: the pages stay on, emails link to them, and no other origin may
// call the API with credentials. The specification is served while developing only.
const HEADLESS_SETTINGS = {
  HEADLESS_ONLY: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        "`true`: the account pages are not served (they answer 404) and the project's own front end, through " +
        'the headless API, is the only interface. Start-up refuses it unless `HEADLESS_FRONTEND_URLS` names ' +
        '`account_confirm_email` and `account_reset_password_from_key`, because emails would otherwise link to pages ' +
        'that do not exist; the plugin refuses to mount without `headless: true`.',
    },
  }),
  HEADLESS_FRONTEND_URLS: setting({
    field: jsonObjectField(frontendUrlsSchema, `a JSON object from ${FRONTEND_URL_NAMES.join('/')} to absolute URLs, {key} standing for the key`),
    default: { base: {} },
    docs: {
      allowed:
        'a JSON object from `account_confirm_email`, `account_reset_password`, `account_reset_password_from_key`, ' +
        '`account_signup`, `socialaccount_login_error` to absolute `http://` or `https://` URLs; the first and third ' +
        'must contain `{key}`',
      does:
        "The front end's routes that emails link to instead of the pages: `{key}` is replaced by the mailed key, " +
        'URL-encoded. Each key left out keeps its page. See [headless.md](headless.md#emails-and-your-front-end).',
    },
  }),
  HEADLESS_SERVE_SPECIFICATION: setting({
    field: booleanField(),
    default: { base: false, local: true },
    docs: {
      allowed: '`true` / `false`',
      does:
        "Serve the headless API's OpenAPI description at `/_allauth/openapi.json` and `/_allauth/openapi.yaml`, " +
        'and its interactive docs, for signed-in staff, at `/_allauth/openapi.html`. Off, the three answer 404.',
    },
  }),
  CORS_ALLOWED_ORIGINS: setting({
    field: stringListField('a comma-separated list of origins such as https://app.example.com', z.string().refine(isOrigin)),
    default: { base: [] },
    docs: {
      allowed: 'list of origins such as `https://app.example.com` (scheme and host, optional port, no path, no wildcards)',
      does:
        "Origins whose pages may call the headless API and the API layer's `/api/` with credentials " +
        '(`Access-Control-Allow-Origin` with that origin, `Access-Control-Allow-Credentials: true`). Other origins get ' +
        'no CORS headers. These origins also pass the CSRF origin check, like `CSRF_TRUSTED_ORIGINS`; their requests ' +
        'still need the CSRF token. See [headless.md](headless.md#front-ends-on-another-origin-cors).',
    },
  }),
};

export const HEADLESS: SettingGroup<typeof HEADLESS_SETTINGS> = { id: 'headless', settings: HEADLESS_SETTINGS };
