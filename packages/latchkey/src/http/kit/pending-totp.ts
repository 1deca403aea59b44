import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionDeps } from './pending-login.js';

/**
 * Session key holding the encrypted secret of an authenticator app awaiting its first code
 * (TotpSetup.pending). The pages and the headless API keep it under the same key, so a setup
 * started in one carries on in the other, and both show the same secret until it is activated.
 */
const PENDING_TOTP = '_mfa_pending_totp';

/** The secret awaiting its first code in this session, as the flow sealed it; undefined when none. */
export async function pendingTotpSecret(page: SessionDeps, request: FastifyRequest): Promise<string | undefined> {
  const value = (await page.sessions.session(request))?.data[PENDING_TOTP];
  return typeof value === 'string' ? value : undefined;
}

/** Keeps (or, given undefined, forgets) the secret awaiting its first code. */
export async function keepPendingTotpSecret(page: SessionDeps, request: FastifyRequest, reply: FastifyReply, pending: string | undefined): Promise<void> {
  const session = await page.sessions.ensureSession(request, reply);
  const { [PENDING_TOTP]: _previous, ...rest } = session.data;
  await page.deps.sessions.saveData(session, pending === undefined ? rest : { ...rest, [PENDING_TOTP]: pending });
}
