/**
 * "Site & hosts" in docs/settings.md: the secret key, the site's name and address, the hosts and
 * port, HSTS and the admin's path.
 */
import { z } from 'zod';
import { SHIPPED_LANGUAGES } from '../../core/i18n/languages.js';
import { booleanField, integerField, patternField, stringField, stringListField } from '../fields.js';
import { setting, VALUE, type SettingGroup } from './declaration.js';

const ABSOLUTE_HTTP_URL = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;
/** A path segment such as `admin/` or `staff-8fk2/`: no leading slash, one trailing slash. */
const ADMIN_PATH = /^(?!\/)[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*\/$/;
/** Empty, or segments each after one slash (`/auth`, `/id/accounts`): ASCII, none of them `.` or `..`, no trailing slash. */
const MOUNT_PREFIX = /^(\/(?!\.\.?(?:\/|$))[A-Za-z0-9._~-]+)*$/;

/** A language code as Django writes it (`en-us`, `pt-br`, `zh-hans`); `pt_BR` and `pt-BR` are accepted and read as `pt-br`. */
const LANGUAGE_CODE_PATTERN = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/;

const SITE_SETTINGS = {
  SECRET_KEY: setting({
    field: stringField('a string of at least 1 character (use 50 or more random characters)'),
    // No default anywhere: loadSettings generates one outside production (local keeps it in a
    // file), and production must be told (docs/settings.md).
    default: {},
    docs: {
      allowed: 'any non-empty text; use 50 or more random characters',
      default: { local: 'generated and kept in `.latchkey/secret-key`', test: 'random per process' },
      does:
        'The key from which Latchkey derives the keys that sign email confirmation links, password reset links and the ' +
        '"trust this browser" cookie, and that encrypt stored MFA secrets (TOTP secrets and the seeds of recovery ' +
        'codes). Keep it secret, and do not change it once it is set: a new key voids the links already mailed and, ' +
        "worse, makes every user's authenticator app and recovery codes unreadable, so users with MFA cannot log in " +
        'until it is set up again (see [mfa.md](mfa.md#changing-the-secret-key-and-locked-out-users)). Production ' +
        'refuses to start without it. `check --deploy` warns when it is shorter than 50 characters or has fewer than 5 ' +
        'different characters.',
    },
  }),
  SITE_NAME: setting({
    field: stringField('a non-empty name'),
    default: { base: (project) => project.SITE_NAME },
    docs: {
      allowed: 'non-empty text',
      default: "the project file's `SITE_NAME`",
      does: "The site's name, for pages and emails.",
    },
  }),
  SITE_URL: setting({
    field: stringField('an absolute http(s) URL without query, e.g. https://example.com', ABSOLUTE_HTTP_URL),
    default: { local: 'http://localhost:8000', test: 'http://testserver', production: (project) => `https://${project.DOMAIN_NAME}` },
    docs: {
      allowed: 'an absolute `http://` or `https://` URL with no query, e.g. `https://example.com`',
      default: { local: '`http://localhost:` + `PORT` (`HOST` instead of localhost when it names one machine; `http://localhost:8000` with `PORT=0`)', production: '`https://` + `DOMAIN_NAME`' },
      does:
        'The public address of the site. Its origin is always trusted by the CSRF check. Links in emails are built from ' +
        "it, never from the request's `Host` header. `check --deploy` warns when it is not `https://`.",
    },
  }),
  ALLOWED_HOSTS: setting({
    field: stringListField('a comma-separated list of host names, e.g. example.com,www.example.com'),
    default: {
      local: ['localhost', '127.0.0.1', '[::1]'],
      test: ['testserver', 'localhost', '127.0.0.1'],
      production: (project) => [project.DOMAIN_NAME],
    },
    docs: {
      allowed: 'list of host names: `example.com` (exact), `.example.com` (the domain and all its subdomains), or `*` (any host)',
      default: { production: '`DOMAIN_NAME`' },
      does:
        'Requests with any other `Host` header are answered with `400 Bad Request`. See ' +
        '[security.md](security.md#allowed-hosts).',
    },
  }),
  HOST: setting({
    field: stringField('a host name or IP address to listen on'),
    variable: 'HOST',
    // Every interface in production (behind its proxy or in its container); this machine only
    // while developing and testing.
    default: { base: '0.0.0.0', local: '127.0.0.1', test: '127.0.0.1' },
    docs: {
      allowed: 'a host name or IP address',
      does: 'Where the server listens. Your server script reads it; the example site does.',
    },
  }),
  PORT: setting({
    field: integerField(0, 65535),
    variable: 'PORT',
    default: { base: 8000 },
    docs: {
      allowed: 'whole number 0–65535',
      does: 'The port the server listens on.',
    },
  }),
  TRUST_PROXY_HOPS: setting({
    field: integerField(0, 10),
    default: { base: 0 },
    docs: {
      allowed: 'whole number 0–10',
      does:
        'How many reverse proxies sit in front of the app. With 0, `X-Forwarded-*` headers are ignored. With *n*, the ' +
        'app believes the last *n* entries added by your proxies, which gives it the real client IP and the `https` ' +
        "protocol. The example site's app passes it to Fastify's `trustProxy`; do the same in your own app. See " +
        '[production.md](production.md#behind-a-reverse-proxy).',
    },
  }),
  SECURE_HSTS_SECONDS: setting({
    field: integerField(0, 2 * 365 * 86400),
    // Django's: no Strict-Transport-Security unless asked. Production asks for a year: browsers
    // that have seen the site once never try it over plain HTTP again, so an attacker on the
    // network cannot strip TLS from the next visit (RFC 6797 section 2.3).
    default: { base: 0, production: 365 * 86400 },
    docs: {
      allowed: 'whole number of seconds, 0–63072000 (two years)',
      default: { production: `${VALUE} (a year)` },
      does:
        "Django's setting: when not 0, every answer to a request that came over HTTPS carries " +
        '`Strict-Transport-Security: max-age=<seconds>`, so a browser that has seen the site once goes to it only over ' +
        'HTTPS for that long. "Came over HTTPS" behind a proxy means the `X-Forwarded-Proto` of a trusted hop ' +
        "(`TRUST_PROXY_HOPS`). Nothing is sent over plain HTTP, where browsers ignore it. The project's app adds " +
        '`latchkey.securityHeaders` to every route (the example site does). `check --deploy` warns when it is 0 ' +
        '(`latchkey.W015`). See [production.md](production.md#security-headers).',
    },
  }),
  // Subdomains and the browsers' preload list are the operator's decision: both bind hosts beyond
  // this site.
  SECURE_HSTS_INCLUDE_SUBDOMAINS: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        'Adds `includeSubDomains`: every subdomain, too, is then reached over HTTPS only. Turn it on only when every ' +
        'subdomain serves HTTPS.',
    },
  }),
  SECURE_HSTS_PRELOAD: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        "Adds `preload`, the consent to be listed in the browsers' built-in HSTS list (hstspreload.org), which is hard " +
        'to undo. Start-up refuses it without `SECURE_HSTS_INCLUDE_SUBDOMAINS=true` and `SECURE_HSTS_SECONDS` of at ' +
        'least `31536000`, which the list requires.',
    },
  }),
  URL_PREFIX: setting({
    field: patternField('empty, or a path such as /auth: a slash before each segment, none at the end, ASCII letters, digits and -._~', MOUNT_PREFIX),
    default: { base: '' },
    docs: {
      allowed:
        'empty, or a path such as `/auth` or `/id/accounts`: a `/` before each segment and none at the end; ASCII letters, ' +
        'digits and `-._~`; no `.` or `..` segment',
      default: "empty (the site's root)",
      does:
        'Where the project mounts all of Latchkey: the account pages, the headless API (`/_allauth/`), the API layer ' +
        "(`/api/`), the admin (`ADMIN_URL`), Latchkey's static files and its health check are served under it, and " +
        'every link, redirect, form, mailed link and callback URL registered at a provider carries it. ' +
        '`latchkey.plugin` registers its routes under it; registering the plugin with a Fastify `prefix` other than ' +
        "this one is refused. The project's own routes (the plugin's `routes` option) stay where it puts them. See " +
        '[extending.md](extending.md#mounting-latchkey-under-a-prefix).',
    },
  }),
  ADMIN_URL: setting({
    field: stringField('a path such as admin/ (no leading slash, one trailing slash)', ADMIN_PATH),
    // No production default on purpose: production must be told (docs/settings.md), and `admin/` is the
    // first path an attacker tries (check --deploy warns about it).
    default: { local: 'admin/', test: 'admin/' },
    docs: {
      allowed: 'a path with no leading slash and one trailing slash, e.g. `staff-7f3k2x/`',
      does: 'Where the admin area is mounted ([admin.md](admin.md)). `check --deploy` warns about `admin/`.',
    },
  }),
  LANGUAGE_CODE: setting({
    field: stringField('a language code such as en-us, fr or pt-br', LANGUAGE_CODE_PATTERN),
    default: { base: 'en-us' },
    docs: {
      allowed: 'a language code as Django writes it: `en-us`, `fr`, `pt-br`',
      does:
        "The language of a request that asks for none of `LANGUAGES` (no choice stored, no usable `Accept-Language`), and of " +
        'mails to a person whose language is not known. Start-up refuses a code `LANGUAGES` cannot serve ' +
        '([translations.md](translations.md)).',
    },
  }),
  LANGUAGES: setting({
    field: stringListField('a comma-separated list of language codes such as en,fr,de', z.string().regex(LANGUAGE_CODE_PATTERN)),
    default: { base: [...SHIPPED_LANGUAGES] },
    docs: {
      allowed: 'list of language codes; Latchkey ships `en`, `fr`, `de`, `es`, `pt-br`, `ja`, `ar`',
      does:
        'The languages the site offers, in the order the language switch lists them. A request gets the first of the ' +
        "person's stored choice, the language cookie, `Accept-Language` and `LANGUAGE_CODE` that is offered. A language " +
        "without a catalog of Latchkey's or the project's shows English ([translations.md](translations.md)).",
    },
  }),
  ADMIN_FORCE_ALLAUTH: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      does:
        "Send the admin's login through the account login (social sign-in and MFA included) and back, as " +
        "cookiecutter-django's `secure_admin_login`.",
    },
  }),
};

export const SITE: SettingGroup<typeof SITE_SETTINGS> = { id: 'site', settings: SITE_SETTINGS };
