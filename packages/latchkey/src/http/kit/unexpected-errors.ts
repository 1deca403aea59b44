import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').includes('json') || (request.headers.accept ?? '').includes('application/json');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * What a client sees when a request fails unexpectedly. Errors Fastify raises for bad input
 * (malformed JSON 400, body too large 413, unsupported media type 415) keep their status and
 * their message, which describes the request, not the server. Anything else is a 500 with a
 * generic body: the real error, which may name tables, hosts or file paths, goes to the log only.
 */
export function handleUnexpectedError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  const message = status === 500 ? 'A server error occurred.' : error.message;
  if (status === 500) request.log.error({ err: error }, 'request failed');
  reply.code(status).header('cache-control', 'no-store');
  if (wantsJson(request)) return reply.send({ detail: message });
  const title = status === 500 ? 'Server Error (500)' : `Bad Request (${status})`;
  return reply.type('text/html; charset=utf-8').send(`<!doctype html><title>${title}</title><h1>${title}</h1><p>${escapeHtml(message)}</p>`);
}
