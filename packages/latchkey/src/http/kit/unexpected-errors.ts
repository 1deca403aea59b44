import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isServiceOutage } from '../../core/outage.js';
import { msgid } from '../../core/i18n/message.js';
import { escapeHtml } from './reference-page.js';

/** Message ids (msgid): a door that shows one to a person translates it. */
export const SERVER_ERROR = msgid('A server error occurred.');
/** A 503's message: the database is away for a moment (a restart); nothing about which or why. */
export const SERVICE_UNAVAILABLE = msgid('The service is temporarily unavailable. Please try again in a moment.');

/** A request that failed outside any flow's refusal: the status to answer and what may be said. */
export interface RequestFailure {
  status: number;
  /** Safe to show: the generic message for a 500 or 503, else Fastify's description of the request. */
  message: string;
  error: FastifyError;
}

export type PresentFailure = (failure: RequestFailure, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * What a client sees when a request fails unexpectedly, for every door: errors Fastify raises for
 * bad input (malformed JSON 400, body too large 413, unsupported media type 415) keep their status
 * and message, which describe the request, not the server. A connection to the database lost or
 * refused (a restart: core/outage.ts) is a 503 with a generic message, and one short log line.
 * Anything else is a 500 with a generic message: the real error, which may name tables, hosts or
 * file paths, goes to the log only. The door chooses the shape of the body (`present`); nothing
 * that fails is ever cached.
 */
export function unexpectedErrorHandler(present: PresentFailure): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (error, request, reply) => {
    let status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500 && isServiceOutage(error)) status = 503;
    if (status === 500) request.log.error({ err: error }, 'request failed');
    // No stack: during a restart every request fails alike, and the cause is all that helps.
    if (status === 503) request.log.warn(`request refused, the database is unavailable: ${error.message}`);
    reply.code(status).header('cache-control', 'no-store');
    const message = status === 500 ? SERVER_ERROR : status === 503 ? SERVICE_UNAVAILABLE : error.message;
    return present({ status, message, error }, request, reply);
  };
}

/** A client that sent or asks for JSON (a fetch() of a project's front end) is answered in JSON. */
export function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').includes('json') || (request.headers.accept ?? '').includes('application/json');
}

/**
 * A small HTML page without the site's layout, or `{"detail": ...}` for a JSON client.
 *
 * @deprecated Use `latchkey.errorHandler`, which answers the same statuses and JSON but shows the
 * site's own error pages (500.html and the others, in its layout: kit/error-pages.ts). Kept for
 * projects generated before it; it will be removed in a major release.
 */
export const handleUnexpectedError = unexpectedErrorHandler(({ status, message }, request, reply) => {
  if (wantsJson(request)) return reply.send({ detail: message });
  const title = status === 500 ? 'Server Error (500)' : status === 503 ? 'Service Unavailable (503)' : `Bad Request (${status})`;
  return reply.type('text/html; charset=utf-8').send(`<!doctype html><title>${title}</title><h1>${title}</h1><p>${escapeHtml(message)}</p>`);
});
