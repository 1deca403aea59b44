import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { TOO_MANY_ATTEMPTS } from '../account/credentials.js';
import { LatchkeyError } from '../core/errors.js';
import { RateLimitedError } from '../core/rate-limit/index.js';
import type { LatchkeyDeps } from '../deps.js';
import { proveWebauthnKey } from '../mfa/flows/webauthn.js';
import { INVALID_CREDENTIAL, type WebauthnCeremony } from '../mfa/webauthn.js';
import { beginLogin, type LoginResult } from './pipeline.js';
import type { LoginContext } from './stages.js';

export interface PasskeyLoginInput extends LoginContext {
  /** The ceremony this client began (webauthnAuthenticationOptions(deps, 'login')), as its session kept it. */
  ceremony: WebauthnCeremony | undefined;
  credential: AuthenticationResponseJSON;
}

/**
 * A passkey login (MFA_PASSKEY_LOGIN_ENABLED): the browser offers a discoverable credential, whose
 * user handle names the account. The passkey proved possession and verified the person, so it is
 * both factors at once (allauth's rule) and the MFA stage passes; every other stage still runs,
 * and an inactive account gets no further than with a password. Attempts count per IP against the
 * same limit as password logins.
 */
export async function loginWithPasskey(deps: LatchkeyDeps, input: PasskeyLoginInput): Promise<LoginResult> {
  if (!deps.settings.MFA_PASSKEY_LOGIN_ENABLED) throw new LatchkeyError('not_found', 'Passkey login is not available.');
  const { ceremony, credential, ...context } = input;
  const attempt = await deps.rateLimits.consume('login', { ip: context.client.ip });
  if (!attempt.allowed) throw new RateLimitedError('login', attempt.retryAfterSeconds, TOO_MANY_ATTEMPTS);
  const key = await proveWebauthnKey(deps, { ceremony, credential, purpose: 'login', client: context.client });
  const user = await deps.store.users.findById(key.authenticator.userId);
  if (!user) throw new LatchkeyError('incorrect_code', INVALID_CREDENTIAL, { param: 'credential' });
  return beginLogin(deps, user, { kind: 'passkey', authenticatorId: key.authenticator.id }, context);
}
