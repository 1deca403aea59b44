import { BUILT_IN_LOGIN_STAGES, loginStageId, type CustomLoginStage, type LoginStageEntry } from '../account/login-stages.js';
import { LatchkeyError } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';
import { msg } from '../core/i18n/message.js';

/**
 * The ids a stage of the project's own may not take: the built-in stages' and the headless API's
 * other flows', since a client routes on the pending flow's id and must never mistake one for
 * another.
 */
const TAKEN_IDS: ReadonlySet<string> = new Set<string>([
  ...BUILT_IN_LOGIN_STAGES,
  'login',
  'signup',
  'reauthenticate',
  'mfa_reauthenticate',
  'mfa_login_webauthn',
  'provider_redirect',
  'provider_token',
  'provider_signup',
]);

const STAGE_ID = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The adapter's list of login stages, refused with a clear message where it would let a login
 * skip a stage or confuse a client: each built-in stage once, each of the project's own once,
 * under an id of its own. createLatchkey asks this as it starts, so a wrong list never serves.
 */
export function checkLoginStages(entries: readonly LoginStageEntry[]): void {
  const invalid = (why: string) => new LatchkeyError('configuration_invalid', `getLoginStages(): ${why}`);
  const ids = entries.map(loginStageId);
  const missing = BUILT_IN_LOGIN_STAGES.filter((id) => !ids.includes(id));
  if (missing.length > 0) throw invalid(`every built-in stage must stay in the list; missing ${missing.join(', ')}.`);
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice !== undefined) throw invalid(`the stage ${twice} is listed twice.`);
  for (const entry of entries) {
    if (typeof entry === 'string') continue;
    if (!STAGE_ID.test(entry.id)) throw invalid(`a stage's id is lowercase letters, digits and underscores, starting with a letter; "${entry.id}" is not.`);
    if (TAKEN_IDS.has(entry.id)) throw invalid(`"${entry.id}" is the id of one of Latchkey's own stages or flows; give the project's stage another.`);
    if (typeof entry.isPending !== 'function' || typeof entry.complete !== 'function' || typeof entry.template !== 'string') {
      throw invalid(`the stage ${entry.id} needs isPending(user), complete(user, answer) and a template.`);
    }
  }
}

/** The stages a login runs now, in order. */
export function loginStagesOf(deps: Pick<LatchkeyDeps, 'adapter'>): readonly LoginStageEntry[] {
  return deps.adapter.getLoginStages();
}

/** The project's stage with this id, if it has one. */
export function customStageOf(deps: Pick<LatchkeyDeps, 'adapter'>, id: string): CustomLoginStage | undefined {
  return loginStagesOf(deps).find((entry): entry is CustomLoginStage => typeof entry !== 'string' && entry.id === id);
}

const SIGN_IN_ON_THE_SITE = msg('Signing in needs a step this endpoint cannot take. Sign in on the site first, then ask for a token again.');

/** What the token API says to a login waiting at the project's stage: it cannot come back to it. */
export function tokenRefusalOf(stage: CustomLoginStage): LatchkeyError {
  return new LatchkeyError('permission_denied', stage.tokenRefusal ?? SIGN_IN_ON_THE_SITE, { reason: stage.id });
}
