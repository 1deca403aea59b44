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
import type { SamlSubject } from '../model.js';
import { ProviderError, type ProviderProfile, type SamlLogoutMessage, type SamlServiceProvider } from '../providers/provider.js';

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

/**
 * An IdP's LogoutRequest, accepted once: checked by the app's service provider (signed, for this
 * SLS, recent), then its ID claimed, so that a captured logout link cannot sign the person out
 * again. It ends the session only when it names it (signOut): a session signed in through this
 * IdP, for the NameID the request names and, when it names any, in one of its SessionIndexes. The
 * IdP speaks for its own sessions and no others: a password login is never its to end, and a
 * signed request brought by someone else's browser ends nothing there (docs/saml.md).
 */
export async function acceptSamlLogoutRequest(
  deps: Pick<LatchkeyDeps, 'clock' | 'oneTimeClaims'>,
  providerId: string,
  saml: SamlServiceProvider,
  message: SamlLogoutMessage,
  signedIn: { provider: string; subject: SamlSubject } | undefined,
): Promise<{ answerUrl: string; signOut: boolean }> {
  const now = deps.clock.now();
  const accepted = await saml.answerLogoutRequest(message, now);
  const seconds = Math.max(1, Math.ceil((accepted.usableUntil.getTime() - now.getTime()) / 1000));
  if (!(await deps.oneTimeClaims.claim(`saml-logout:${sha256Hex(`${providerId}\u0000${accepted.requestId}`)}`, seconds, now))) {
    throw new ProviderError('failed', `${providerId}: the LogoutRequest was used before (a replayed logout)`);
  }
  const signOut = signedIn !== undefined && signedIn.provider === providerId && accepted.names(signedIn.subject);
  return { answerUrl: await accepted.answerUrl(signOut), signOut };
}
