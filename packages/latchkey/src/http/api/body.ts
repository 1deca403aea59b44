import type { FastifyInstance, FastifyRequest } from 'fastify';
import { msg, type Message } from '../../core/i18n/message.js';
import { parseJson } from '../kit/input.js';

/**
 * Request bodies of the API layer, parsed as Django REST framework's default parsers do (JSON and
 * form-encoded). DRF parses a body only when the view reads it, after authentication and the
 * permission check; Fastify parses before any hook. To keep DRF's order (an anonymous client gets
 * 401 whatever it sent), a body that cannot be parsed does not fail here: it becomes an
 * `UnparsedBody` that the view runner answers with 400 or 415 once the request is admitted.
 */
export class UnparsedBody {
  constructor(
    readonly status: 400 | 415,
    /** Translated when sent (api/respond.ts sendDetail). */
    readonly detail: Message | string,
  ) {}
}

/** 1 MiB, Fastify's default: larger bodies are refused with 413 before they are read in full. */
export const API_BODY_LIMIT = 1024 * 1024;
/** Enough of a Content-Type to recognise it in an error message, never a whole oversized header. */
const MAX_ECHOED_MEDIA_TYPE = 200;

/** DRF's UnsupportedMediaType message. */
export function unsupportedMediaType(contentType: string | undefined): Message {
  return msg('Unsupported media type "{media_type}" in request.', { media_type: (contentType ?? '').slice(0, MAX_ECHOED_MEDIA_TYPE) });
}

function readJsonBody(text: string): unknown {
  // An empty body is no data, as DRF reads it ({}), not malformed JSON: a DELETE from a client
  // that always sends the header has nothing to say.
  if (text.trim() === '') return undefined;
  try {
    return parseJson(text);
  } catch (error) {
    // English, as DRF's `JSON parse error - %s` is: the parser's own words, for the developer who sent it.
    return new UnparsedBody(400, `JSON parse error - ${error instanceof Error ? error.message : 'invalid JSON'}`);
  }
}

/**
 * A form body as Django's QueryDict gives a serializer: the last value of a repeated field, in
 * an object without a prototype so that no field name can reach Object.prototype.
 */
function parseForm(text: string): Record<string, string> {
  const fields = Object.create(null) as Record<string, string>;
  for (const [name, value] of new URLSearchParams(text)) fields[name] = value;
  return fields;
}

/** Replaces the scope's parsers (Latchkey's form parser included) with the API layer's. */
export function registerApiBodyParsers(api: FastifyInstance): void {
  api.removeAllContentTypeParsers();
  api.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: API_BODY_LIMIT }, (_request, body, done) => {
    done(null, readJsonBody(body as string));
  });
  api.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: API_BODY_LIMIT }, (_request, body, done) => {
    done(null, parseForm(body as string));
  });
  // Any other type (text/plain, multipart, none at all) is left unread and refused with 415 once
  // the request is admitted: text/plain is what a cross-site form can send without a preflight.
  api.addContentTypeParser('*', (request: FastifyRequest, _payload, done) => {
    done(null, new UnparsedBody(415, unsupportedMediaType(request.headers['content-type'])));
  });
}
