/** "Social" in docs/settings.md: sign-in through OAuth2, OpenID Connect and SAML providers. */
import { z } from 'zod';
import { booleanField, integerField, jsonObjectField, stringListField } from '../fields.js';
import { setting, type SettingGroup } from './declaration.js';

const providersSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/**
 * A host as a URL's hostname gives it: a domain name, an IPv4 address or a bracketed IPv6 one, in
 * any case, without port, path or trailing dot (`127.1` is refused: its hostname is `127.0.0.1`).
 */
function isHost(value: string): boolean {
  return URL.canParse(`https://${value}/`) && new URL(`https://${value}/`).hostname === value.toLowerCase() && !value.endsWith('.');
}

// allauth's defaults: a new person signs up without a form when the provider gave a free address;
// email verification as for local accounts; a GET only shows a button (no login CSRF by link); a
// provider that does not answer within 5 seconds fails the sign-in.
const SOCIAL_SETTINGS = {
  SOCIALACCOUNT_PROVIDERS: setting({
    field: jsonObjectField(providersSchema, 'a JSON object keyed by provider id'),
    default: { base: {} },
    docs: {
      allowed: 'a JSON object keyed by provider type, each value an object',
      does:
        'The social sign-in apps (`"openid_connect": {"APPS": [...]}`) and per-provider settings; an invalid app stops ' +
        'start-up. See [social.md](social.md).',
    },
  }),
  SOCIALACCOUNT_AUTO_SIGNUP: setting({
    field: booleanField(),
    default: { base: true },
    docs: {
      allowed: '`true`/`false`',
      does: "Sign a new person up without a form when the provider's address has no account.",
    },
  }),
  SOCIALACCOUNT_EMAIL_VERIFICATION: setting({
    field: jsonObjectField(z.enum(['mandatory', 'optional', 'none']).nullable(), '"mandatory", "optional", "none" or null (as ACCOUNT_EMAIL_VERIFICATION)'),
    default: { base: null },
    docs: {
      allowed: '`"mandatory"`, `"optional"`, `"none"` or `null` (JSON)',
      does: 'Email verification for sign-ins through a provider; `null` follows `ACCOUNT_EMAIL_VERIFICATION`.',
    },
  }),
  SOCIALACCOUNT_LOGIN_ON_GET: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true`/`false`',
      does: 'Start a provider sign-in on a GET; by default a GET shows a button that POSTs (login CSRF protection).',
    },
  }),
  SOCIALACCOUNT_REQUESTS_TIMEOUT: setting({
    field: integerField(1, 120),
    default: { base: 5 },
    docs: {
      allowed: '1 to 120 (seconds)',
      does: "How long to wait for a provider's discovery, token and userinfo endpoints.",
    },
  }),
  SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: setting({
    field: stringListField('a comma-separated list of host names or IP addresses such as keycloak.internal,10.0.0.5,[fd00::5], or empty', z.string().refine(isHost)),
    // In production no provider may be on a loopback or private address unless listed here.
    default: { base: [] },
    docs: {
      allowed:
        'comma-separated host names or IP addresses as a URL writes them (`keycloak.internal,10.0.0.5,[fd00::5]`), no ' +
        'port',
      does:
        'In production, the hosts a provider may be at although they are (or resolve to) a loopback or private address; ' +
        'every other such provider is refused (SSRF). Outside production any host is allowed. See ' +
        '[social.md](social.md#where-a-provider-may-be).',
    },
  }),
  // Never sign in to an existing local account by a matching address unless the project (or the
  // provider's settings) says that provider's verified addresses are to be trusted.
  SOCIALACCOUNT_EMAIL_AUTHENTICATION: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true`/`false`',
      does:
        'Sign in to the local account whose address a provider marks verified (also per provider, ' +
        '`EMAIL_AUTHENTICATION`, or per app, `settings.email_authentication`). See ' +
        '[social.md](social.md#signing-in-by-a-verified-address-socialaccount_email_authentication).',
    },
  }),
  SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true`/`false`',
      does: 'With email authentication, also connect the provider account to that local account.',
    },
  }),
  SOCIALACCOUNT_STORE_TOKENS: setting({
    field: booleanField(),
    // A provider's access and refresh tokens are kept (encrypted) only when the project asks.
    default: { base: false },
    docs: {
      allowed: '`true`/`false`',
      does: "Keep the provider's access and refresh tokens, encrypted with `SECRET_KEY`.",
    },
  }),
};

export const SOCIAL: SettingGroup<typeof SOCIAL_SETTINGS> = { id: 'social', settings: SOCIAL_SETTINGS };
