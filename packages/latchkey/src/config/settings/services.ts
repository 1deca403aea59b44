/**
 * "Database & services" in docs/settings.md. The four keep the variable names other tools already
 * know (DATABASE_URL, ...), without the LATCHKEY_ prefix.
 */
import { optionalStringField, stringField } from '../fields.js';
import { setting, VALUE, type SettingGroup } from './declaration.js';

const SERVICE_SETTINGS = {
  DATABASE_URL: setting({
    // Its form is checked a moment later by config/database-url.ts, before anything connects.
    field: stringField('sqlite:PATH, sqlite::memory: or postgres://user:pass@host:port/db'),
    variable: 'DATABASE_URL',
    // No production default on purpose: production must be told (docs/settings.md).
    default: { local: 'sqlite:./db.sqlite3', test: 'sqlite::memory:' },
    docs: {
      allowed:
        '`sqlite:PATH` (relative to the working directory, or absolute), `sqlite::memory:`, ' +
        '`postgres://user:pass@host:port/db` (also `postgresql://`)',
      does:
        'The database. URL forms like `sqlite://x` are refused, to avoid creating a file in the wrong place. PostgreSQL ' +
        'must answer within 5 seconds at start-up.',
    },
  }),
  EMAIL_URL: setting({
    // Its form is checked a moment later by config/email-url.ts.
    field: stringField('smtp://[user:pass@]host:port, smtps://..., console: or memory:'),
    variable: 'EMAIL_URL',
    // No production default on purpose: production must be told (docs/settings.md).
    default: { local: 'console:', test: 'memory:' },
    docs: {
      allowed: '`smtp://[user:pass@]host[:port]`, `smtps://[user:pass@]host[:port]`, `console:`, `memory:`',
      does:
        'How email is sent. `smtp://` uses STARTTLS when the server offers it, and insists on it when the URL carries a ' +
        'password and the host is not this machine (default port 25). `smtps://` uses TLS from the start (default port ' +
        '465). Certificates are always verified. Query parameters are refused. URL-encode special characters in the ' +
        'user name and password. `console:` prints each email to standard output; `memory:` keeps emails in memory, for ' +
        'tests.',
    },
  }),
  DEFAULT_FROM_EMAIL: setting({
    field: stringField('an email address, optionally with a display name: "Site <noreply@example.com>"'),
    variable: 'DEFAULT_FROM_EMAIL',
    // Django's; check --deploy warns that it is no real sender.
    default: { base: 'webmaster@localhost' },
    docs: {
      allowed: 'non-empty text: an address, optionally with a name: `Acme <noreply@acme.example>`',
      default: `${VALUE} (in every environment)`,
      does: 'The sender of every email. Set it in production.',
    },
  }),
  REDIS_URL: setting({
    field: optionalStringField('redis://[user:pass@]host:port[/db] or empty', /^(rediss?:\/\/\S+)?$/),
    variable: 'REDIS_URL',
    default: { base: null },
    docs: {
      allowed: '`redis://…` or `rediss://…`, or empty',
      default: 'unset',
      does:
        'Where the rate-limit counters and the replay guards of one-time codes (used TOTP codes) are kept. Unset, they ' +
        'live in the database, which every instance sharing it also shares. Redis must answer within 5 seconds at ' +
        'start-up.',
    },
  }),
};

export const SERVICES: SettingGroup<typeof SERVICE_SETTINGS> = { id: 'services', settings: SERVICE_SETTINGS };
