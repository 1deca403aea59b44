import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorKind, isLatchkeyError, type ErrorKind } from '../../core/errors.js';
import type { WebauthnCeremony } from '../../mfa/webauthn.js';
import type { HttpContext } from '../kit/context.js';
import { readerTranslator } from '../kit/request-language.js';
import { keepWebauthnCeremony } from '../kit/webauthn-ceremony.js';

/**
 * How a page hands its script (static/webauthn.js) the options of a WebAuthn ceremony. The script
 * asks the page's own path with `Accept: application/json` when the person presses the button, so
 * that the challenge's five minutes start then and not when the page was loaded (as allauth's
 * passkey login does). The ceremony is kept in the session for the answer the form then posts.
 * No CORS header is ever set on the pages, so another site cannot read these answers.
 */
export function wantsOptions(request: FastifyRequest): boolean {
  return String(request.headers.accept ?? '').includes('application/json');
}

/**
 * What the script reads: `creation_options` for a new key, `request_options` for proving one, each
 * as `{ publicKey: <options JSON> }` (allauth's js_data and the headless API's shape alike).
 */
export type OptionsName = 'creation_options' | 'request_options';

export async function sendOptions(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  name: OptionsName,
  begun: { options: unknown; ceremony: WebauthnCeremony },
): Promise<FastifyReply> {
  await keepWebauthnCeremony(ctx, request, reply, begun.ceremony);
  return reply.code(200).header('cache-control', 'no-store').header('vary', 'Accept').type('application/json; charset=utf-8').send({ [name]: { publicKey: begun.options } });
}

const OPTIONS_STATUS: Partial<Record<ErrorKind, number>> = { not_found: 404, too_many: 429, unavailable: 503, reauthenticate: 401, forbidden: 403 };

/**
 * A flow's refusal to begin a ceremony, as the script shows it: the message, in the reader's
 * language as the page around it, and where to go instead when there is somewhere (the login page
 * for a visitor whose login is gone).
 */
export async function sendOptionsRefusal(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, error: unknown, location?: string): Promise<FastifyReply> {
  if (!isLatchkeyError(error)) throw error;
  const status = OPTIONS_STATUS[errorKind(error)] ?? 400;
  const translator = readerTranslator(ctx.deps, request, await ctx.sessions.currentUser(request));
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send({ error: translator.translate(error.text), ...(location === undefined ? {} : { location }) });
}

/** The answer to a script whose session cannot begin this ceremony at all: go there instead. */
export function sendOptionsElsewhere(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(409).header('cache-control', 'no-store').type('application/json; charset=utf-8').send({ location });
}
