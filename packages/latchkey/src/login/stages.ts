import { BUILT_IN_LOGIN_STAGES, type BuiltInLoginStage, type CustomLoginStage, type LoginStageEntry } from '../account/login-stages.js';
import type { User } from '../account/model.js';
import { sendEmailConfirmation } from '../account/email-confirmation.js';
import type { ClientInfo } from '../core/client.js';
import { isLatchkeyError } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';
import { hasSecondFactor } from '../mfa/authenticators.js';
import { checkLoginCode, checkLoginWebauthn, trustThisBrowser, type WebauthnAnswer } from '../mfa/flows/authenticate.js';
import { addSignupPasskey, type SignupPasskeyAnswer } from '../mfa/flows/webauthn.js';
import { isTrustedBrowser } from '../mfa/trust.js';
import type { Settings } from '../config/settings.js';
import { gaveCode, provedSecondFactor, type FirstFactor, type LoginProofs, type StageProof } from './proofs.js';
import { askForLoginCode, verifyEmailByCode, type StageCode } from './mailed-codes/stage-codes.js';
import type { MailedCodeState } from '../account/mailed-codes.js';

/**
 * The stages after the first factor, in this order (allauth's). Every login runs all of them,
 * whatever its first factor, and no session exists until each has passed:
 * - login_by_code: where ACCOUNT_LOGIN_BY_CODE_REQUIRED asks for it, a login that did not begin
 *   with a mailed code waits for one (mailed-codes/stage-codes.ts);
 * - verify_email: under mandatory verification, an account without a verified address waits
 *   for the mailed link, or under verification by code for the mailed code (mailed-codes/stage-codes.ts);
 * - mfa_authenticate: a user with a second factor gives a code, unless this browser is trusted
 *   for them (or the first factor was a passkey, itself a second factor);
 * - mfa_trust: a browser that gave a code is asked whether to trust it next time, where the
 *   project allows it (MFA_TRUST_ENABLED) and the client can keep the cookie;
 * - mfa_signup_webauthn: a passkey signup (first factor passkey_signup), its address verified,
 *   makes the account's passkey.
 */
export const LOGIN_STAGES = BUILT_IN_LOGIN_STAGES;
/**
 * The id of a stage a login waits at: one of LOGIN_STAGES, or the id of one of the project's own
 * (account/login-stages.ts CustomLoginStage), which the adapter's getLoginStages lists.
 */
export type LoginStage = BuiltInLoginStage | (string & {});

/** What a login context tells the stages: who is asking, and what their client can keep. */
export interface LoginContext {
  client: ClientInfo;
  /** The "trust this browser" cookie the client sent (mfa/trust.ts); ignored unless MFA_TRUST_ENABLED. */
  mfaTrustToken?: string | undefined;
  /** Whether the client keeps a trust cookie and can be asked to (browsers: yes; apps and token clients: no). */
  canTrustBrowser?: boolean;
  /**
   * The caller has just mailed the confirmation link itself (a signup does, and reports whether
   * the mail left), so a login stopped at verify_email must not mail it a second time.
   */
  confirmationJustSent?: boolean;
  /** Under verification by code: the code that mail carried, for the stage to hold. */
  sentVerificationCode?: MailedCodeState | undefined;
  /**
   * Whether the client can type back a code a stage mails (default true). The token API keeps
   * nothing between requests, so it could never answer one: no code is mailed to it.
   */
  takesMailedCodes?: boolean;
}

/**
 * The answers a client gives at a stopped stage: a code or a security key's assertion (with the
 * ceremony its session kept), whether to trust this browser.
 */
export interface StageAnswers {
  code?: string;
  /** The code a stage mailed (login_by_code, verify_email by code). */
  emailCode?: string;
  webauthn?: WebauthnAnswer;
  trust?: boolean;
  /** The new passkey of a passkey signup (mfa_signup_webauthn). */
  signupPasskey?: SignupPasskeyAnswer;
}

export interface StageRun {
  deps: LatchkeyDeps;
  user: User;
  /** What the login has proved so far. */
  proofs: LoginProofs;
  answers: StageAnswers;
  context: LoginContext;
  /** The code the stopped login holds, mailed by the stage it waits at. */
  code?: StageCode | undefined;
}

export type StageOutcome =
  | { passed: true; proof?: StageProof; trustToken?: string }
  /** Stopped, holding the code the stage mailed, if it did. */
  | { passed: false; code?: StageCode }
  /** The login cannot go on (the code it waited for is expired or used up). */
  | { passed: false; ended: true };

const PASSED: StageOutcome = { passed: true };
const STOPPED: StageOutcome = { passed: false };

/**
 * How strictly a login's first factor needs a verified address: a provider's sign-in follows
 * SOCIALACCOUNT_EMAIL_VERIFICATION where it is set, as allauth's; everything else the account setting.
 */
export function emailVerificationFor(settings: Settings, firstFactor: FirstFactor): Settings['ACCOUNT_EMAIL_VERIFICATION'] {
  if (firstFactor.kind === 'socialaccount') return settings.SOCIALACCOUNT_EMAIL_VERIFICATION ?? settings.ACCOUNT_EMAIL_VERIFICATION;
  return settings.ACCOUNT_EMAIL_VERIFICATION;
}

/**
 * Mandatory verification stops a login until an address is verified, and mails the link again
 * (within the confirm_email limit). A mail that cannot go out now does not change the answer (the
 * next attempt resends it); anything else (the database) is a real failure.
 */
async function verifyEmail(run: StageRun): Promise<StageOutcome> {
  const { deps, user, proofs, context } = run;
  if (emailVerificationFor(deps.settings, proofs[0]) !== 'mandatory') return PASSED;
  const addresses = await deps.store.emailAddresses.listForUser(user.id);
  if (addresses.some((address) => address.verified)) return PASSED;
  const primary = addresses.find((address) => address.primary) ?? addresses[0];
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) return verifyEmailByCode(run, primary);
  if (primary && context.confirmationJustSent !== true) {
    try {
      await sendEmailConfirmation(deps, primary, context.client);
    } catch (error) {
      if (!isLatchkeyError(error, 'mail_failed')) throw error;
    }
  }
  return STOPPED;
}

/**
 * A user with a second factor proves it: by a code or a security key (checked, claimed and
 * counted against the login limits by checkLoginCode and checkLoginWebauthn, which throw
 * 'incorrect_code' or 'rate_limited'), or by a browser trusted for them. A proof given earlier in this login (before a later stage stopped it)
 * stands; the code that gave it is used up.
 */
async function authenticateWithSecondFactor({ deps, user, proofs, answers, context }: StageRun): Promise<StageOutcome> {
  const authenticators = await deps.store.authenticators.listForUser(user.id);
  if (!hasSecondFactor(authenticators)) return PASSED;
  if (provedSecondFactor(proofs)) return PASSED;
  if (isTrustedBrowser(deps, user, authenticators, context.mfaTrustToken)) return { passed: true, proof: { kind: 'trusted_browser' } };
  if (answers.webauthn !== undefined) {
    await checkLoginWebauthn(deps, user, answers.webauthn, context.client);
    return { passed: true, proof: { kind: 'webauthn' } };
  }
  if (answers.code === undefined) return STOPPED;
  const type = await checkLoginCode(deps, user, answers.code, context.client);
  return { passed: true, proof: { kind: type } };
}

/**
 * After a code, a browser may be trusted to skip it next time (a signed cookie, mfa/trust.ts).
 * The question is asked only where the project allows it and the client can keep the cookie;
 * a client that answers together with the code (the pages' checkbox) is not stopped for it.
 */
async function askToTrustBrowser({ deps, user, proofs, answers, context }: StageRun): Promise<StageOutcome> {
  if (!deps.settings.MFA_TRUST_ENABLED || context.canTrustBrowser !== true || !gaveCode(proofs)) return PASSED;
  if (answers.trust === undefined) return STOPPED;
  const trustToken = answers.trust ? await trustThisBrowser(deps, user) : undefined;
  return trustToken === undefined ? PASSED : { passed: true, trustToken };
}

/**
 * A passkey signup ends by making the account's passkey (allauth's PasskeySignupStage): the login
 * waits here until the browser's new passkey is checked and stored (addSignupPasskey throws
 * 'incorrect_code' for a bad one, and the login keeps waiting). The passkey is the login's proof:
 * the session records it as a passkey sign-in. Any other login passes.
 */
async function makeSignupPasskey({ deps, user, proofs, answers, context }: StageRun): Promise<StageOutcome> {
  if (proofs[0].kind !== 'passkey_signup') return PASSED;
  if (answers.signupPasskey === undefined) return STOPPED;
  await addSignupPasskey(deps, user, answers.signupPasskey, context.client);
  return PASSED;
}

const STAGE_CHECKS: Record<BuiltInLoginStage, (run: StageRun) => Promise<StageOutcome>> = {
  login_by_code: askForLoginCode,
  verify_email: verifyEmail,
  mfa_authenticate: authenticateWithSecondFactor,
  mfa_trust: askToTrustBrowser,
  mfa_signup_webauthn: makeSignupPasskey,
};

/**
 * A stage of the project's own waits while its isPending says so. It keeps nothing in the login:
 * what the person did there is the project's record, read again each time the stages run.
 */
function customStageCheck(stage: CustomLoginStage): (run: StageRun) => Promise<StageOutcome> {
  return async ({ user }) => ((await stage.isPending(user)) ? STOPPED : PASSED);
}

/** The check that decides whether a login passes `entry`. */
export function stageCheckOf(entry: LoginStageEntry): (run: StageRun) => Promise<StageOutcome> {
  return typeof entry === 'string' ? STAGE_CHECKS[entry] : customStageCheck(entry);
}
