import type { FastifyRequest } from 'fastify';
import { msgid } from '../../core/i18n/message.js';

/**
 * Reading `Authorization: Token <key>` as Django REST framework's TokenAuthentication does. The
 * header is either not ours (absent, or another scheme such as Bearer or Basic: the request is
 * simply not token-authenticated), malformed (401 with DRF's message), or carries a key to look up.
 * The key is only ever taken from this header: a `?token=` in the URL ends up in logs, browser
 * history and Referer headers, so it is never looked at.
 */
export type TokenHeader = { kind: 'absent' } | { kind: 'malformed'; detail: string } | { kind: 'key'; key: string };

/** DRF's keyword, compared without regard to case as DRF does (`token <key>` is accepted). */
const KEYWORD = 'token';
/** What Python's bytes.split() splits on: ASCII whitespace. */
const WHITESPACE = /[ \t\n\r\v\f]+/;
/** A key is ASCII without spaces; anything else could never have been issued. */
const KEY_CHARACTERS = /^[\x21-\x7e]+$/;

/** DRF's messages (and one of Latchkey's), as message ids: strings that clients compare, translated when sent. */
export const NO_CREDENTIALS = msgid('Invalid token header. No credentials provided.');
export const CONTAINS_SPACES = msgid('Invalid token header. Token string should not contain spaces.');
export const INVALID_CHARACTERS = msgid('Invalid token header. Token string should not contain invalid characters.');
export const SEVERAL_HEADERS = msgid('Invalid token header. Only one Authorization header may be sent.');

/** Parses one Authorization header value (as Node gives it: each byte one latin-1 character). */
export function parseTokenHeader(value: string | undefined): TokenHeader {
  const parts = (value ?? '').trim().split(WHITESPACE).filter((part) => part !== '');
  if (parts.length === 0 || parts[0]?.toLowerCase() !== KEYWORD) return { kind: 'absent' };
  if (parts.length === 1) return { kind: 'malformed', detail: NO_CREDENTIALS };
  if (parts.length > 2) return { kind: 'malformed', detail: CONTAINS_SPACES };
  const key = parts[1] ?? '';
  if (!KEY_CHARACTERS.test(key)) return { kind: 'malformed', detail: INVALID_CHARACTERS };
  return { kind: 'key', key };
}

/** How many Authorization headers the request carried (Node keeps only the first in `headers`). */
function authorizationHeaderCount(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let index = 0; index < raw.length; index += 2) if (raw[index]?.toLowerCase() === 'authorization') count += 1;
  return count;
}

/**
 * The request's token header. Two Authorization headers are refused whatever they say: a proxy
 * or a server could read either one, and a request that means two things is not authenticated.
 */
export function tokenHeaderOf(request: FastifyRequest): TokenHeader {
  if (authorizationHeaderCount(request) > 1) return { kind: 'malformed', detail: SEVERAL_HEADERS };
  const value = request.headers.authorization;
  return parseTokenHeader(typeof value === 'string' ? value : undefined);
}
