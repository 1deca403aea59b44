/** "Multi-factor authentication" in docs/settings.md: second factors, passkeys and trusted browsers. */
import { z } from 'zod';
import { AUTHENTICATOR_TYPES } from '../choices.js';
import { booleanField, integerField, listField, optionalStringField, stringListField } from '../fields.js';
import { urlFor } from '../url-names.js';
import { setting, VALUE, type SettingGroup } from './declaration.js';
import { isOrigin } from './origins.js';

// allauth.mfa's defaults: HMAC-SHA1 with a 30 s step and 6 digits (what every authenticator app
// supports), no extra steps of drift, 10 recovery codes of 8 digits; "trust this browser" off.
const MFA_SETTINGS = {
  MFA_SUPPORTED_TYPES: setting({
    field: listField(AUTHENTICATOR_TYPES),
    default: { base: ['totp', 'recovery_codes'] },
    docs: {
      allowed: 'list of `totp`, `recovery_codes`, `webauthn`, each at most once; may be empty',
      does:
        `The kinds of second factor users may set up and manage at \`${urlFor('mfa_index')}\` (\`webauthn\`: security keys and ` +
        'passkeys, see [passkeys.md](passkeys.md)). Taking a type out stops new setups but never switches off a factor ' +
        'already in use: users who have an authenticator app are still asked for a code at login, and their codes are ' +
        'still accepted. Without `recovery_codes`, activating an app creates no recovery codes.',
    },
  }),
  MFA_TOTP_PERIOD: setting({
    field: integerField(15, 300),
    default: { base: 30 },
    docs: {
      allowed: 'whole number of seconds, 15–300',
      does: 'The TOTP time step: how often the app shows a new code.',
    },
  }),
  MFA_TOTP_DIGITS: setting({
    field: integerField(6, 8),
    default: { base: 6 },
    docs: {
      allowed: 'whole number 6–8',
      does: 'Digits in a TOTP code.',
    },
  }),
  MFA_TOTP_TOLERANCE: setting({
    field: integerField(0, 10),
    default: { base: 0 },
    docs: {
      allowed: 'whole number 0–10',
      does:
        'How many time steps before and after the current one are also accepted, for phones whose clock is off. With ' +
        "`0` only the current step's code is accepted.",
    },
  }),
  MFA_RECOVERY_CODE_COUNT: setting({
    field: integerField(1, 100),
    default: { base: 10 },
    docs: {
      allowed: 'whole number 1–100',
      does: 'Recovery codes in a set.',
    },
  }),
  MFA_RECOVERY_CODE_DIGITS: setting({
    field: integerField(6, 12),
    default: { base: 8 },
    docs: {
      allowed: 'whole number 6–12',
      does: 'Digits in a recovery code.',
    },
  }),
  MFA_TRUST_ENABLED: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        'Offer "trust this browser" at the login\'s code step: a cookie, `latchkey_mfa_trusted`, that lets later logins ' +
        'of the same user in that browser skip the code (never the password). See [mfa.md](mfa.md#trust-this-browser).',
    },
  }),
  MFA_TRUST_COOKIE_AGE: setting({
    field: integerField(60, 365 * 86400),
    default: { base: 14 * 86400 },
    docs: {
      allowed: 'whole number of seconds, 60–31536000 (365 days)',
      default: `${VALUE} (14 days)`,
      does: 'How long a trusted browser stays trusted.',
    },
  }),
  // Passkeys (MFA_SUPPORTED_TYPES with "webauthn"): as a second factor only, unless the project
  // turns on passkey login and passkey signup. The relying party is SITE_URL's host, and a
  // ceremony is accepted from SITE_URL's origin and the SPA origins of CORS_ALLOWED_ORIGINS.
  MFA_PASSKEY_LOGIN_ENABLED: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        'A passkey signs in alone, without a username or password, and counts as both factors: "Sign in with a passkey" ' +
        'on the login page, the headless `auth/webauthn/login`, and a **Passkey** choice when adding a key. Needs ' +
        '`webauthn` in `MFA_SUPPORTED_TYPES`. See [passkeys.md](passkeys.md).',
    },
  }),
  MFA_PASSKEY_SIGNUP_ENABLED: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        'Signing up with an address (and a username, where the project has them) and a passkey, never a password: the ' +
        'headless `auth/webauthn/signup`. Needs `webauthn` in `MFA_SUPPORTED_TYPES`, ' +
        '`ACCOUNT_EMAIL_VERIFICATION=mandatory` and `ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED=true`: the address is ' +
        'proved by a mailed code before the passkey is made (as allauth).',
    },
  }),
  MFA_WEBAUTHN_RP_ID: setting({
    field: optionalStringField('a domain name such as example.com (the site\'s host or a parent of it), or empty for SITE_URL\'s host', /^([a-z0-9-]+(\.[a-z0-9-]+)*)?$/i),
    default: { base: null },
    docs: {
      allowed: "a domain name: `SITE_URL`'s host or a parent domain of it; empty for the default",
      default: "`SITE_URL`'s host",
      does:
        'The WebAuthn relying party id that keys are made for and checked against. A parent domain (`example.com` for ' +
        '`www.example.com`) lets keys work on its other subdomains too. Keys are bound to it: changing it later makes ' +
        'every existing key unusable.',
    },
  }),
  MFA_WEBAUTHN_ALLOWED_ORIGINS: setting({
    field: stringListField('a comma-separated list of origins such as https://app.example.com, or empty for SITE_URL\'s origin and CORS_ALLOWED_ORIGINS', z.string().refine(isOrigin)),
    default: { base: [] },
    docs: {
      allowed: 'comma-separated origins such as `https://app.example.com`',
      default: `${VALUE}: \`SITE_URL\`'s origin and \`CORS_ALLOWED_ORIGINS\``,
      does:
        'The pages a WebAuthn ceremony may come from (the origin the browser writes into its answer); any other ' +
        "origin's answer is refused. Each must be on the relying party id's domain, or the browser refuses the " +
        'ceremony.',
    },
  }),
};

export const MFA: SettingGroup<typeof MFA_SETTINGS> = { id: 'mfa', settings: MFA_SETTINGS };
