import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HeldVerificationCode } from '../../account/flows/verify-email.js';
import type { HttpContext } from './context.js';

/**
 * Where every door keeps a mailed email verification code that no waiting login holds
 * (account/flows/verify-email.ts): a signed-in user's code for the address they added or asked
 * again for, or a signup's code that no mail carries. It lives in the client's own session (a
 * browser's cookie session, an app's session token), so the code works only there, and a journey
 * begun on the pages can be finished through the headless API of the same session. One at a time:
 * a new code replaces the last.
 */
const EMAIL_CODE = '_email_verification_code';

/**
 * The client's held code, expired or not: an expired one is answered as expired by the flow (and
 * then forgotten), exactly as the code a waiting login holds, so that the two cannot be told apart.
 */
export async function heldVerificationCode(ctx: HttpContext, request: FastifyRequest): Promise<HeldVerificationCode | undefined> {
  return (await ctx.sessions.session(request))?.data[EMAIL_CODE] as HeldVerificationCode | undefined;
}

export async function keepVerificationCode(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, held: HeldVerificationCode): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  await ctx.deps.sessions.saveData(session, { ...session.data, [EMAIL_CODE]: held });
}

export async function forgetVerificationCode(ctx: HttpContext, request: FastifyRequest): Promise<void> {
  const session = await ctx.sessions.session(request);
  if (!session || !(EMAIL_CODE in session.data)) return;
  const { [EMAIL_CODE]: _forgotten, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
}
