import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from './reference-page.js';

export const SERVER_ERROR = 'A server error occurred.';

/** A request that failed outside any flow's refusal: the status to answer and what may be said. */
export interface RequestFailure {
  status: number;
  /** Safe to show: the generic message for a 500, else Fastify's description of the request. */
  message: string;
  error: FastifyError;
}

export type PresentFailure = (failure: RequestFailure, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

/**
 * What a client sees when a request fails unexpectedly, for every door: errors Fastify raises for
 * bad input (malformed JSON 400, body too large 413, unsupported media type 415) keep their status
 * and message, which describe the request, not the server. Anything else is a 500 with a generic
 * message: the real error, which may name tables, hosts or file paths, goes to the log only. The
 * door chooses the shape of the body (`present`); nothing that fails is ever cached.
 */
export function unexpectedErrorHandler(present: PresentFailure): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (error, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'request failed');
    reply.code(status).header('cache-control', 'no-store');
    return present({ status, message: status === 500 ? SERVER_ERROR : error.message, error }, request, reply);
  };
}

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').includes('json') || (request.headers.accept ?? '').includes('application/json');
}

/** The pages' and the project's routes: a small HTML page, or `{"detail": ...}` for a JSON client. */
export const handleUnexpectedError = unexpectedErrorHandler(({ status, message }, request, reply) => {
  if (wantsJson(request)) return reply.send({ detail: message });
  const title = status === 500 ? 'Server Error (500)' : `Bad Request (${status})`;
  return reply.type('text/html; charset=utf-8').send(`<!doctype html><title>${title}</title><h1>${title}</h1><p>${escapeHtml(message)}</p>`);
});
