import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import type { HttpContext } from '../kit/context.js';
import type { SignupOutcome } from '../kit/session-state.js';
import { availableFlows, reauthenticationFlows } from './pending-flows.js';
import { userData } from './user.js';

/** One entry of an error response (allauth's shape): what went wrong, a stable code, and the field. */
export interface HeadlessError {
  message: string;
  code: string;
  param?: string;
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
  return sendEnvelope(ctx, request, reply, status, { errors });
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

export const ACCOUNT_INACTIVE = 'This account is inactive.';

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
