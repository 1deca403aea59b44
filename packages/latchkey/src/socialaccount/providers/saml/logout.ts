/**
 * Single logout at the SLS, HTTP-Redirect binding (the one a browser can bring our SameSite=Lax
 * session cookie to, so the one the SP metadata offers). node-saml checks the query's signature;
 * it accepts an unsigned message, and it does not look at where or when a signed one was meant
 * for, so those checks are made here, as python3-saml's strict mode makes them (SAML Bindings
 * §3.4.5.2): a signature is required, the message's Destination must be this SLS, and its
 * IssueInstant must be recent, within the app's allowed clock drift. The flow (flows/saml-login.ts)
 * then lets each LogoutRequest be used once. Only the IdP's LogoutRequests arrive here: Latchkey
 * starts no single logout of its own, so no LogoutResponse is ever owed to it, and one is refused.
 */
import { inflateRawSync } from 'node:zlib';
import type { SAML } from '@node-saml/node-saml';
import { ProviderError, type AcceptedLogoutRequest, type SamlLogoutMessage } from '../provider.js';
import { attributeOf, parseXml, SAML_PROTOCOL, MAX_DOCUMENT_BYTES } from './xml.js';

interface Checks {
  appId: string;
  slsUrl: string;
  now: Date;
  allowedClockDriftSeconds: number;
}

/** The signed message's root: a LogoutRequest whose Destination (when given) is this SLS and whose IssueInstant is recent. */
function checkedMessage(deflated: string, checks: Checks): { id: string; issuedAt: number } {
  const kind = 'LogoutRequest';
  const fail = (why: string) => new ProviderError('failed', `${checks.appId}: the ${kind} ${why}`);
  let xml: string;
  try {
    xml = inflateRawSync(Buffer.from(deflated, 'base64'), { maxOutputLength: MAX_DOCUMENT_BYTES }).toString('utf8');
  } catch {
    throw fail('cannot be inflated');
  }
  const root = parseXml(xml)?.documentElement;
  if (!root || root.namespaceURI !== SAML_PROTOCOL || root.localName !== kind) throw fail(`is not a SAML ${kind}`);
  const destination = attributeOf(root, 'Destination');
  if (destination !== undefined && destination !== checks.slsUrl) throw fail(`is meant for ${JSON.stringify(destination)}, not this SLS`);
  const id = attributeOf(root, 'ID');
  const issuedAt = Date.parse(attributeOf(root, 'IssueInstant') ?? '');
  if (!id || Number.isNaN(issuedAt)) throw fail('has no ID or IssueInstant');
  const drift = checks.allowedClockDriftSeconds * 1000;
  if (Math.abs(checks.now.getTime() - issuedAt) > drift) throw fail('was not issued within the allowed clock drift of now');
  return { id, issuedAt };
}

function requireSignature(message: SamlLogoutMessage, appId: string): void {
  const { fields } = message;
  if (fields.Signature === undefined || fields.SigAlg === undefined) throw new ProviderError('failed', `${appId}: the LogoutRequest is not signed`);
}

export async function acceptLogoutRequest(sp: SAML, message: SamlLogoutMessage, checks: Checks): Promise<AcceptedLogoutRequest> {
  const { fields } = message;
  if (fields.SAMLRequest === undefined) throw new ProviderError('failed', `${checks.appId}: the SLS got no LogoutRequest`);
  requireSignature(message, checks.appId);
  const { id, issuedAt } = checkedMessage(fields.SAMLRequest, checks);
  try {
    const { profile } = await sp.validateRedirectAsync(fields, message.rawQuery);
    if (!profile) throw new Error('no LogoutRequest');
    const answerUrl = await sp.getLogoutResponseUrlAsync(profile, fields.RelayState ?? '', {}, true);
    return { requestId: id, usableUntil: new Date(issuedAt + checks.allowedClockDriftSeconds * 1000), answerUrl };
  } catch (error) {
    throw new ProviderError('failed', `${checks.appId}: the LogoutRequest was refused: ${error instanceof Error ? error.message : String(error)}`);
  }
}
