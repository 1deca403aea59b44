import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import type { HttpContext } from '../kit/context.js';
import type { SignupOutcome } from '../kit/session-state.js';
import { availableFlows, reauthenticationFlows } from './pending-flows.js';
import type { Translator } from '../../core/i18n/catalogs.js';
import { msg, type Message } from '../../core/i18n/message.js';
import { negotiatedLanguage } from '../kit/request-language.js';
import { userData } from './user.js';

/** One entry of an error response (allauth's shape): what went wrong, a stable code, and the field. */
export interface HeadlessError {
  /** For people, in the request's language: a marked message (msg()) or a message id, translated when sent. */
  message: Message | string;
  code: string;
  param?: string;
}

/**
 * The language of the API's messages: the request's (the language cookie, then Accept-Language,
 * then LANGUAGE_CODE; http/kit/request-language.ts). An app sends Accept-Language; `code` and
 * `param` never change with it, so clients keep routing on them.
 */
export function headlessTranslator(ctx: HttpContext, request: FastifyRequest): Translator {
  return ctx.deps.catalogs.translator(negotiatedLanguage(ctx.deps.settings, request));
}

/**
 * Every headless response: `{status, data, meta, errors}` with the HTTP status repeated in the
 * body, never cached (the bodies carry personal data and session tokens), and, when this request
 * created or changed an app session, the new token in `meta.session_token`.
 */
export function sendEnvelope(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, status: number, body: Record<string, unknown> = {}): FastifyReply {
  const token = ctx.sessions.issuedToken(request);
  const meta = token === undefined ? body.meta : { ...(body.meta as Record<string, unknown> | undefined), session_token: token };
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .type('application/json; charset=utf-8')
    .send({ status, ...body, ...(meta === undefined ? {} : { meta }) });
}

export function sendOk(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, body: { data?: unknown; meta?: Record<string, unknown> } = {}): FastifyReply {
  return sendEnvelope(ctx, request, reply, 200, body);
}

export function sendErrors(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, status: number, errors: HeadlessError[]): FastifyReply {
  const translator = headlessTranslator(ctx, request);
  const translated = errors.map((error) => ({ ...error, message: translator.translate(error.message) }));
  // Where two refusals read the same on the same field (password1 and password2 are one `password` here), once.
  const distinct = translated.filter((entry, index) => translated.findIndex((other) => other.param === entry.param && other.message === entry.message) === index);
  reply.header('content-language', translator.language);
  return sendEnvelope(ctx, request, reply, status, { errors: distinct });
}

/** 200 with the signed-in user and how they proved who they are in this session. */
export async function sendAuthenticated(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, user: User): Promise<FastifyReply> {
  const data = { user: userData(ctx.deps, user), methods: await ctx.sessions.authentications(request) };
  return sendEnvelope(ctx, request, reply, 200, { data, meta: { is_authenticated: true } });
}

/** 401 (or 410 for a dead app session): not signed in, with the flows that can change that. */
export async function sendUnauthenticated(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, status: 401 | 410 = 401): Promise<FastifyReply> {
  return sendEnvelope(ctx, request, reply, status, { data: { flows: await availableFlows(ctx, request) }, meta: { is_authenticated: false } });
}

/** 401 for a signed-in user whose last proof is too old for the change asked for, with the ways to prove it again. */
export async function sendReauthenticationRequired(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, user: User): Promise<FastifyReply> {
  const data = {
    user: userData(ctx.deps, user),
    methods: await ctx.sessions.authentications(request),
    flows: await reauthenticationFlows(ctx, user),
  };
  return sendEnvelope(ctx, request, reply, 401, { data, meta: { is_authenticated: true } });
}

export const ACCOUNT_INACTIVE = msg('This account is inactive.');

/**
 * How the headless API presents what became of a login (kit/session-state.ts settleLogin): 200
 * with the user once signed in; 401 with the flows (the stage it waits at marked pending) while
 * it is stopped, over, or waiting for the mailed link; 400 account_inactive for an inactive account.
 */
export async function presentLogin(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, outcome: SignupOutcome): Promise<FastifyReply> {
  if (outcome.kind === 'signed_in') return sendAuthenticated(ctx, request, reply, outcome.user);
  if (outcome.kind === 'inactive') return sendErrors(ctx, request, reply, 400, [{ message: ACCOUNT_INACTIVE, code: 'account_inactive' }]);
  return sendUnauthenticated(ctx, request, reply);
}
