import type { LatchkeyError } from '../../core/errors.js';
import type { LoginResult } from '../../login/pipeline.js';
import type { ProviderProfile } from '../providers/provider.js';

/**
 * A signup the provider's answer could not finish alone (its address has an account here, the
 * project's cleanEmail refuses it, it gave none, or SOCIALACCOUNT_AUTO_SIGNUP is off): kept
 * server-side, in the person's session, until they complete the social signup form. The
 * provider's tokens are not kept with it: they would sit in the session in clear; they are stored
 * at the next sign-in instead.
 */
export interface PendingProviderSignup {
  /** The provider's id (an OpenID Connect app's provider_id). */
  provider: string;
  profile: ProviderProfile;
  /** Where to go once signed in: a path on this site, already checked. */
  next: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/**
 * What came of a provider's answer to a login: the login pipeline's result (for an existing
 * account, or one just signed up), signup closed, the social signup form to fill in, or the
 * project's refusal (SocialAccountAdapter.preSocialLogin), for the door to show.
 */
export type ProviderLoginResult =
  | { status: 'login'; login: LoginResult }
  | { status: 'signup_closed' }
  | { status: 'signup_form'; signup: PendingProviderSignup }
  | { status: 'refused'; refusal: LatchkeyError };
