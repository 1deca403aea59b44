import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LoginMethod, LoginStage, PendingLoginState } from '../../account/flows/login.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { RequestSessions } from './request-sessions.js';

/** What pending logins need: the flows' dependencies and the request's sessions (cookie or token). */
export interface SessionDeps {
  deps: LatchkeyDeps;
  sessions: RequestSessions;
}

/**
 * The stage a login waits at: one of the flow's stages, or (headless browser client only) the
 * question whether to trust this browser, asked once a right code has passed the last stage.
 */
export type PendingStage = LoginStage | 'mfa_trust';

/**
 * A login that has passed its credentials but stopped at a stage (an unverified address, or the
 * second factor) is kept in the browser's session, for ACCOUNT_LOGIN_TIMEOUT at most. Only
 * that browser can carry it on, only at the stage it stopped at, and only until it expires;
 * signing in again or signing out replaces or ends it.
 */
export interface PendingLogin {
  /** The flow's state of the stopped login (whose user, and a mark of the credentials it proved). */
  login: PendingLoginState;
  stage: PendingStage;
  /** At 'mfa_trust': how the login was completed (the password and which code). */
  method?: LoginMethod;
  remember: boolean;
  next: string;
  expiresAt: string;
}

const PENDING_LOGIN = '_pending_login';

export async function startPendingLogin(page: SessionDeps, request: FastifyRequest, reply: FastifyReply, pending: Omit<PendingLogin, 'expiresAt'>): Promise<void> {
  // The password has just been proved: like a login, this is a change of privilege. A session id
  // planted in the browser before it (or seen by anyone else) must not be the one that can finish
  // the login with a stolen code, so the pending login always lives under a new id.
  const session = (await page.sessions.rotate(request, reply)) ?? (await page.sessions.ensureSession(request, reply));
  const expiresAt = new Date(page.deps.clock.now().getTime() + page.deps.settings.ACCOUNT_LOGIN_TIMEOUT * 1000).toISOString();
  await page.deps.sessions.saveData(session, { ...session.data, [PENDING_LOGIN]: { ...pending, expiresAt } });
}

/** The browser's pending login, or undefined when there is none or it has expired (then it is cleared). */
export async function currentPendingLogin(page: SessionDeps, request: FastifyRequest): Promise<PendingLogin | undefined> {
  const session = await page.sessions.session(request);
  const pending = session?.data[PENDING_LOGIN] as PendingLogin | undefined;
  if (!session || pending === undefined) return undefined;
  if (new Date(pending.expiresAt).getTime() <= page.deps.clock.now().getTime()) {
    await clearPendingLogin(page, request);
    return undefined;
  }
  return pending;
}

export async function clearPendingLogin(page: SessionDeps, request: FastifyRequest): Promise<void> {
  const session = await page.sessions.session(request);
  if (!session || !(PENDING_LOGIN in session.data)) return;
  const { [PENDING_LOGIN]: _cleared, ...rest } = session.data;
  await page.deps.sessions.saveData(session, rest);
}
