import type { FastifyReply } from 'fastify';
import { errorKind, isLatchkeyError, refusalsOf } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import { ApiError } from './views.js';
import { isMessage, msg, msgid, nmsg, type Message } from '../../core/i18n/message.js';
import { inRequestLanguage } from '../kit/request-language.js';

/** DRF's messages (rest_framework/exceptions.py), which clients written against DRF may compare. */
export const NOT_AUTHENTICATED = msgid('Authentication credentials were not provided.');
export const PERMISSION_DENIED = msgid('You do not have permission to perform this action.');
export const NOT_FOUND = msgid('Not found.');

/**
 * A refusal's body is one of DRF's fixed shapes, built here and by the view runner: it goes out as
 * built, whatever a view declared for the status (a route's 400 may be DRF's `{"detail": ...}` for
 * a body that is not JSON as well as its field errors). A view's answers are written from its
 * declaration (route-schema.ts).
 */
export function sendBody(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send(body);
}

const MESSAGE_KEYS = new Set(['id', 'plural', 'count', 'context', 'params']);

/** A msg() message, told apart from a project's own object that happens to have an `id` (`{id: 1, ...}`). */
function isMarkedMessage(value: unknown): value is Message {
  return isMessage(value) && !Array.isArray(value) && Object.keys(value).every((key) => MESSAGE_KEYS.has(key));
}

/**
 * A refusal's body (DRF's shapes are flat: `{"detail": ...}`, `{"field": [...]}`) in the request's
 * language: each string or message, alone or in a list under its key, as DRF's lazy messages are
 * rendered when the response is. A string the catalogs do not know (a project's own text, JSON.parse's
 * words) goes out as it is; anything else (numbers, nested objects) is left alone. A 2xx body is
 * data, and never passes through here.
 */
export function translatedBody(reply: FastifyReply, body: Record<string, unknown>): Record<string, unknown> {
  const translate = (value: unknown): unknown => (typeof value === 'string' || isMarkedMessage(value) ? inRequestLanguage(reply.request, value) : value);
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [key, Array.isArray(value) ? value.map(translate) : translate(value)]));
}

/** A refusal's body (an ApiError's, the declared input's field errors), sent in the request's language. */
export function sendRefusalBody(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return sendBody(reply, status, status >= 400 ? translatedBody(reply, body) : body);
}

/** DRF's `{"detail": ...}`, in the request's language (DRF's messages are translated in Django too). */
export function sendDetail(reply: FastifyReply, status: number, detail: Message | string): FastifyReply {
  return sendBody(reply, status, { detail: inRequestLanguage(reply.request, detail) });
}

/**
 * 401, with the challenge of the first authentication class (TokenAuthentication), as DRF sends
 * it: a client learns that a `Token` header is what it should send.
 */
export function sendNotAuthenticated(reply: FastifyReply, detail: Message | string = NOT_AUTHENTICATED): FastifyReply {
  return sendDetail(reply.header('www-authenticate', 'Token'), 401, detail);
}

/** DRF's Throttled: 429 with Retry-After and the wait in the message. */
export function sendThrottled(reply: FastifyReply, retryAfterSeconds: number | undefined): FastifyReply {
  if (retryAfterSeconds === undefined) return sendDetail(reply, 429, msg('Request was throttled.'));
  const wait = Math.max(1, Math.ceil(retryAfterSeconds));
  reply.header('retry-after', String(wait));
  return sendDetail(reply, 429, nmsg('Request was throttled. Expected available in {count} second.', 'Request was throttled. Expected available in {count} seconds.', wait));
}

/**
 * A view's refusal in DRF's shapes: an ApiError as it says; a flow's LatchkeyError by its kind
 * (core/errors.ts), as DRF would present it (a field's message under the field, otherwise under
 * non_field_errors; a rate limit 429; nothing found 404; a server that cannot do it now 503). Anything else is not a refusal: it
 * is rethrown to the error handler, which logs it and answers a bare 500.
 */
export function sendDrfRefusal(reply: FastifyReply, error: unknown, params: Record<string, string> = {}): FastifyReply {
  if (error instanceof ApiError) return sendRefusalBody(reply, error.status, error.body);
  if (!isLatchkeyError(error)) throw error;
  const kind = errorKind(error);
  if (kind === 'too_many') return sendThrottled(reply, error instanceof RateLimitedError ? error.retryAfterSeconds : undefined);
  if (kind === 'not_found') return sendDetail(reply, 404, NOT_FOUND);
  if (kind === 'unavailable') return sendDetail(reply, 503, error.text);
  // Every field's refusal at once (LatchkeyFieldErrors), each under its field as DRF gives them.
  const body: Record<string, string[]> = {};
  for (const refusal of refusalsOf(error)) {
    const field = refusal.param === undefined ? 'non_field_errors' : (params[refusal.param] ?? refusal.param);
    (body[field] ??= []).push(inRequestLanguage(reply.request, refusal.text));
  }
  return sendBody(reply, 400, body);
}
