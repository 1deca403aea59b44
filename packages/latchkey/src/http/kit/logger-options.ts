/**
 * The Fastify (pino) logger options every project's app uses when it logs: `Fastify({ logger:
 * loggerOptions(settings) })`. They keep credentials out of the log (http/kit/log-redaction.ts):
 *
 * - a request is logged as its method, redacted URL, host and client address: never its headers,
 *   which carry session cookies, `Authorization: Token ...` and `X-Session-Token`;
 * - every message, and an error's message and stack, has the URLs in it redacted (Fastify writes
 *   `Route GET:/accounts/password/reset/key/<key> not found` for a mistyped link);
 * - should a project log headers itself (`request.log.info({ headers: request.headers })`), the
 *   credential-bearing ones are replaced with `[redacted]`.
 */
import type { FastifyServerOptions } from 'fastify';
import type { Settings } from '../../config/settings.js';
import { createUrlRedactor, keyedPrefixesOf, REDACTED, redactUrlsInText, type UrlRedactor } from './log-redaction.js';
import { createReadableLogStream, type LogDestination, type LogOutput } from './readable-log.js';

export type { LogDestination, LogOutput } from './readable-log.js';

/** Fastify's logger options in object form (pino's options, which Fastify does not re-export by name). */
export type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>;

/** Headers that carry a credential or a key (allauth's headless headers among them). */
export const SECRET_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-session-token',
  'x-csrftoken',
  'x-email-verification-key',
  'x-password-reset-key',
];

/** Where a logged object usually keeps headers. */
const HEADER_HOLDERS = ['headers', 'req.headers', 'request.headers', 'res.headers', 'reply.headers'];

/** How deep an error's `cause` chain is followed. */
const MAX_CAUSE_DEPTH = 3;

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number } | null;
}

function serializeRequest(redactUrl: UrlRedactor) {
  return (request: LoggedRequest): Record<string, unknown> => ({
    method: request.method,
    url: typeof request.url === 'string' ? redactUrl(request.url) : undefined,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  });
}

interface SerializedError {
  [field: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

function serializeError(redactText: (text: string) => string) {
  const serialize = (error: unknown, depth: number): SerializedError => {
    if (!(error instanceof Error)) return { type: typeof error, message: redactText(String(error)), stack: '' };
    const fields: SerializedError = { type: error.constructor.name, message: redactText(error.message), stack: redactText(error.stack ?? '') };
    const { code, statusCode } = error as { code?: unknown; statusCode?: unknown };
    if (typeof code === 'string' || typeof code === 'number') fields.code = code;
    if (typeof statusCode === 'number') fields.statusCode = statusCode;
    if (error.cause !== undefined && depth < MAX_CAUSE_DEPTH) fields.cause = serialize(error.cause, depth + 1);
    return fields;
  };
  return (error: unknown): SerializedError => serialize(error, 0);
}

/**
 * pino options for a project's Fastify app. `settings` gives the front end's keyed routes
 * (HEADLESS_FRONTEND_URLS), in case the same server serves them.
 */
export function loggerOptions(settings: Pick<Settings, 'HEADLESS_FRONTEND_URLS'>): LoggerOptions {
  const redactUrl = createUrlRedactor(keyedPrefixesOf(settings.HEADLESS_FRONTEND_URLS));
  const redactText = (text: string): string => redactUrlsInText(text, redactUrl);
  return {
    level: 'info',
    serializers: {
      req: serializeRequest(redactUrl),
      err: serializeError(redactText),
      url: (url: unknown) => (typeof url === 'string' ? redactUrl(url) : url),
    },
    redact: {
      paths: HEADER_HOLDERS.flatMap((holder) => SECRET_HEADERS.map((header) => `${holder}["${header}"]`)),
      censor: REDACTED,
    },
    hooks: {
      // Every message passes here, whoever writes it (Fastify, Latchkey, the project).
      logMethod(args, method) {
        const redacted = (args as unknown[]).map((arg) => (typeof arg === 'string' ? redactText(arg) : arg));
        method.apply(this, redacted as Parameters<typeof method>);
      },
    },
  };
}

/**
 * Where a project's logger writes (`pino(loggerOptions(settings), logDestination(settings))`): in
 * local mode one readable line per request (readable-log.ts), for a developer at a terminal; in
 * every other mode pino's JSON lines, unchanged, for log services. Both carry what loggerOptions'
 * serializers and redaction let through, nothing more.
 */
export function logDestination(settings: Pick<Settings, 'ENVIRONMENT'>, output: LogOutput = process.stdout): LogDestination {
  if (settings.ENVIRONMENT === 'local') return createReadableLogStream(output);
  return { write: (line: string) => void output.write(line) };
}
