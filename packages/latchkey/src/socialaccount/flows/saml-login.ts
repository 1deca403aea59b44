/**
 * A SAML IdP's response, as the sign-in flows take it: verified by the app's service provider
 * (providers/saml/), then its assertion id claimed once in the replay cache until the assertion
 * can no longer be used. An SP-initiated response is already single-use through its InResponseTo
 * (the sign-in's state is claimed once); an unsolicited one has no request to bind it, and the
 * replay cache is then all that stops a captured response from signing in again. The cache lives
 * where the one-time claims do (Redis, else the database), so every instance agrees.
 */
import { sha256Hex } from '../../core/crypto.js';
import type { LatchkeyDeps } from '../../deps.js';
import { ProviderError, type ProviderProfile, type SamlServiceProvider } from '../providers/provider.js';

export async function verifySamlAnswer(
  deps: Pick<LatchkeyDeps, 'clock' | 'oneTimeClaims'>,
  providerId: string,
  saml: SamlServiceProvider,
  samlResponse: string,
  requestId: string | undefined,
): Promise<{ profile: ProviderProfile }> {
  const now = deps.clock.now();
  const verified = await saml.verifyResponse(samlResponse, { requestId, now });
  const seconds = Math.max(1, Math.ceil((verified.usableUntil.getTime() - now.getTime()) / 1000));
  const key = `saml-assertion:${sha256Hex(`${providerId}\u0000${verified.assertionId}`)}`;
  if (!(await deps.oneTimeClaims.claim(key, seconds, now))) {
    throw new ProviderError('failed', `${providerId}: the assertion ${JSON.stringify(verified.assertionId.slice(0, 80))} was used before (a replayed response)`);
  }
  return { profile: verified.profile };
}
