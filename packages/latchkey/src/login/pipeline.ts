import { forgetLoginFailures } from '../account/credentials.js';
import type { User } from '../account/model.js';
import { constantTimeEqual, keyedHash } from '../core/crypto.js';
import type { LatchkeyDeps } from '../deps.js';
import type { FirstFactor, LoginProofs } from './proofs.js';
import type { StageCode } from './mailed-codes/stage-codes.js';
import { loginStageId, type CustomLoginStage } from '../account/login-stages.js';
import { loginStagesOf } from './project-stages.js';
import { stageCheckOf, type LoginContext, type LoginStage, type StageAnswers } from './stages.js';

/**
 * A login is a pipeline: a first factor (a password, a provider's account, a passkey, ...), then
 * the stages the adapter lists (stages.ts, and the project's own), in order, then done. Every way in enters through beginLogin with the
 * first factor it has proved, and a login stopped at a stage carries on through continueLogin,
 * so no door can skip a stage. A stopped login is only a state the adapter keeps for its client
 * (the browser's session, an app's session token); the session of the user is created by the
 * adapter once the result is 'authenticated', and recorded by completeLogin (complete.ts).
 */
export type LoginResult =
  | { status: 'authenticated'; user: User; proofs: LoginProofs; trustToken?: string }
  /** The first factor held, but a stage stops the login until the client answers it. */
  | { status: 'stopped'; stage: LoginStage; user: User; pending: PendingLoginState }
  | { status: 'inactive'; user: User }
  /**
   * The stopped login can never finish: its account is gone, its password changed meanwhile, or
   * the code a stage mailed for it expired or was used up.
   */
  | { status: 'ended' };

/**
 * What an adapter keeps of a stopped login, to carry it on later: whose it is, what it proved so
 * far, and a mark of the account's credentials when it began (a keyed hash of the stored password
 * hash). A password change or reset meanwhile changes the mark, so a client that began the login
 * before it can no longer finish, not even with a right code. A stage that mailed a code keeps
 * the code's state here (only its hash), so the code is bound to this login and to the client
 * that keeps it.
 */
export interface PendingLoginState {
  userId: number;
  credentialMark: string;
  proofs: LoginProofs;
  code?: StageCode;
}

export function pendingLoginState(deps: Pick<LatchkeyDeps, 'settings'>, user: User, proofs: LoginProofs, code?: StageCode): PendingLoginState {
  return { userId: user.id, credentialMark: credentialMark(deps, user), proofs, ...(code === undefined ? {} : { code }) };
}

function credentialMark(deps: Pick<LatchkeyDeps, 'settings'>, user: User): string {
  return keyedHash(deps.settings.SECRET_KEY, 'pending-login', `${user.id}|${user.password}`);
}

/** A first factor has been proved for the user: the stages decide the rest. */
export async function beginLogin(deps: LatchkeyDeps, user: User, firstFactor: FirstFactor, context: LoginContext): Promise<LoginResult> {
  if (!user.isActive) return { status: 'inactive', user };
  // The project's say before any stage (it throws its refusal, a LatchkeyError, to every door alike).
  await deps.adapter.preLogin(user);
  return runStages(deps, user, [firstFactor], {}, context);
}

/**
 * Carries on a stopped login for the same client, with its answers to the stage it waits at (a
 * code, a yes or no to trusting the browser). The account is read again, so one deactivated
 * meanwhile gets no further and one whose password changed meanwhile not at all, and every stage
 * runs again from the start: an earlier stage that stops the login now stops it before a code is
 * asked for or used up.
 */
export async function continueLogin(deps: LatchkeyDeps, pending: PendingLoginState, answers: StageAnswers, context: LoginContext): Promise<LoginResult> {
  const waiting = await userOfStoppedLogin(deps, pending);
  if (waiting.status !== 'waiting') return waiting;
  return runStages(deps, waiting.user, pending.proofs, answers, context, pending.code);
}

/** The stopped login's user, read again: 'ended' where the account went or its password changed meanwhile. */
async function userOfStoppedLogin(deps: LatchkeyDeps, pending: PendingLoginState): Promise<{ status: 'waiting'; user: User } | { status: 'ended' } | { status: 'inactive'; user: User }> {
  const user = await deps.store.users.findById(pending.userId);
  if (!user || !constantTimeEqual(pending.credentialMark, credentialMark(deps, user))) return { status: 'ended' };
  if (!user.isActive) return { status: 'inactive', user };
  return { status: 'waiting', user };
}

/**
 * A login stopped at a stage of the project's own, answered (the stage's page posted, or its
 * headless endpoint called): the stage records what the person sent (its `complete`, which throws
 * a LatchkeyError to refuse it), then the login carries on as after any answer. The user is read
 * and checked first, so a login that can no longer finish records nothing.
 */
export async function answerCustomStage(deps: LatchkeyDeps, pending: PendingLoginState, stage: CustomLoginStage, answer: Readonly<Record<string, unknown>>, context: LoginContext): Promise<LoginResult> {
  const waiting = await userOfStoppedLogin(deps, pending);
  if (waiting.status !== 'waiting') return waiting;
  await stage.complete(waiting.user, answer);
  return runStages(deps, waiting.user, pending.proofs, {}, context, pending.code);
}

async function runStages(deps: LatchkeyDeps, user: User, proven: LoginProofs, answers: StageAnswers, context: LoginContext, code?: StageCode): Promise<LoginResult> {
  let proofs = proven;
  let trustToken: string | undefined;
  for (const entry of loginStagesOf(deps)) {
    const outcome = await stageCheckOf(entry)({ deps, user, proofs, answers, context, code });
    if (!outcome.passed) {
      if ('ended' in outcome) return { status: 'ended' };
      return { status: 'stopped', stage: loginStageId(entry), user, pending: pendingLoginState(deps, user, proofs, outcome.code) };
    }
    if (outcome.proof) proofs = [...proofs, outcome.proof];
    trustToken = outcome.trustToken ?? trustToken;
  }
  await forgetLoginFailures(deps, user, context.client);
  return { status: 'authenticated', user, proofs, ...(trustToken === undefined ? {} : { trustToken }) };
}
