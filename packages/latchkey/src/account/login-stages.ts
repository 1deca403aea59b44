import type { User } from './model.js';
import type { Message } from '../core/i18n/message.js';

/**
 * The stages Latchkey runs after a login's first factor, in allauth's order (login/stages.ts says
 * what each does). A project's adapter lists them, with stages of its own, in getLoginStages.
 */
export const BUILT_IN_LOGIN_STAGES = ['login_by_code', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_signup_webauthn'] as const;

/** The id of one of Latchkey's own login stages. */
export type BuiltInLoginStage = (typeof BUILT_IN_LOGIN_STAGES)[number];

/**
 * A login stage of the project's own (allauth's LoginStage subclass), such as "accept the new
 * terms": every login through every door (the pages, the admin's login, a provider, the headless
 * API) waits at it while `isPending` says the user has something left to do, and no session
 * exists until it passes. A browser is sent to the stage's page (`template`, served at
 * urlFor('account_login_stage', { id })); a headless client sees it as a pending flow with this
 * id and answers at `POST /_allauth/{client}/v1/auth/stage/{id}`. Both hand what the person sent to
 * `complete`, then run the stages again. The token API cannot come back to a stage: it refuses the
 * login with `tokenRefusal`. docs/extending.md, "A login stage of your own", has an example.
 */
export interface CustomLoginStage {
  /** Lowercase letters, digits and underscores, and no built-in stage's or headless flow's id: `accept_terms`. */
  readonly id: string;
  /**
   * Whether this login must wait here: asked each time a login runs its stages, so the answer comes
   * from the project's own records (the version of the terms the user accepted), never from the
   * request.
   */
  isPending(user: User): boolean | Promise<boolean>;
  /** The page's template (the project's template folders are searched first): `account/accept_terms.html`. */
  readonly template: string;
  /**
   * Records what the person did (the page's form fields, or the headless request's JSON body):
   * throw `new LatchkeyError('invalid_input', 'message for the person', { param: 'field' })` to
   * refuse, and the page shows the message (on the field), the API answers 400. Afterwards
   * `isPending` is asked again.
   */
  complete(user: User, answer: Readonly<Record<string, unknown>>): void | Promise<void>;
  /**
   * What the token API says when a login waits here; by default that the person must sign in on
   * the site first. A msg() is translated into the client's language, as Latchkey's own messages.
   */
  readonly tokenRefusal?: string | Message;
}

/** One entry of a project's list of login stages: a built-in stage by its id, or one of its own. */
export type LoginStageEntry = BuiltInLoginStage | CustomLoginStage;

/** A stage's id, whichever kind it is. */
export function loginStageId(entry: LoginStageEntry): string {
  return typeof entry === 'string' ? entry : entry.id;
}
