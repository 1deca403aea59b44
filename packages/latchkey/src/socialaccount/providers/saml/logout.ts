/**
 * Single logout at the SLS, HTTP-Redirect binding (the one a browser can bring our SameSite=Lax
 * session cookie to, so the one the SP metadata offers). node-saml checks the query's signature;
 * it accepts an unsigned message, and it does not look at where or when a signed one was meant
 * for, so those checks are made here, as python3-saml's strict mode makes them (SAML Bindings
 * §3.4.5.2): a signature is required, the message's Destination must be this SLS, and its
 * IssueInstant must be recent, within the app's allowed clock drift. The flow (flows/saml-login.ts)
 * then lets each LogoutRequest be used once. Only the IdP's LogoutRequests arrive here: Latchkey
 * starts no single logout of its own, so no LogoutResponse is ever owed to it, and one is refused.
 *
 * A signed request is not a request to sign out whoever brings it: the browser that carries it may
 * not be the one it was issued for (an attacker can send a victim's browser to their own logout
 * request). It names whose session to end, by NameID and, when it has any, SessionIndex; the flow
 * ends the browser's session only when that is the session it names (docs/saml.md).
 */
import { inflateRawSync } from 'node:zlib';
import type { SAML } from '@node-saml/node-saml';
import type { Element } from '@xmldom/xmldom';
import type { SamlSubject } from '../../model.js';
import { ProviderError, type AcceptedLogoutRequest, type SamlLogoutMessage } from '../provider.js';
import { attributeOf, children, onlyChild, parseXml, readNameId, SAML_ASSERTION, SAML_PROTOCOL, MAX_DOCUMENT_BYTES, textOf, type ReadNameId } from './xml.js';

const UNSPECIFIED_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';

interface Checks {
  appId: string;
  slsUrl: string;
  now: Date;
  allowedClockDriftSeconds: number;
  /** The IdP's entity id and ours: the namespaces a NameID without qualifiers belongs to. */
  idpEntityId: string;
  spEntityId: string;
}

/** Whose sessions a LogoutRequest ends: a NameID's, and of those only the ones its SessionIndexes name (none: all of them). */
interface NamedSessions {
  nameId: ReadNameId;
  sessionIndexes: string[];
}

/** The signed message's root: a LogoutRequest whose Destination (when given) is this SLS and whose IssueInstant is recent. */
function checkedMessage(deflated: string, checks: Checks): { id: string; issuedAt: number; named: NamedSessions } {
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
  const named = namedSessions(root);
  if (!named) throw fail('names nobody by a single plain NameID');
  return { id, issuedAt, named };
}

/** The NameID (an encrypted one is not read: the SP keeps no key for it) and every SessionIndex of a LogoutRequest. */
function namedSessions(root: Element): NamedSessions | undefined {
  const nameId = onlyChild(root, SAML_ASSERTION, 'NameID');
  return nameId && { nameId: readNameId(nameId), sessionIndexes: children(root, SAML_PROTOCOL, 'SessionIndex').map(textOf) };
}

/**
 * Whether a LogoutRequest names the IdP session a sign-in was for (SAML Core §3.7.3.2): the same
 * NameID, an attribute left out standing for its default (Format unspecified, NameQualifier the
 * IdP, SPNameQualifier this service provider), and, when the request names any SessionIndex, the
 * sign-in's among them. A sign-in without a SessionIndex is named only by a request without one.
 */
function namesSignIn(named: NamedSessions, signedIn: SamlSubject, checks: Pick<Checks, 'idpEntityId' | 'spEntityId'>): boolean {
  const spelledOut = (subject: ReadNameId) => [
    subject.nameId,
    subject.format ?? UNSPECIFIED_FORMAT,
    subject.nameQualifier ?? checks.idpEntityId,
    subject.spNameQualifier ?? checks.spEntityId,
  ];
  const [requested, recorded] = [spelledOut(named.nameId), spelledOut(signedIn)];
  if (requested.some((value, index) => value !== recorded[index])) return false;
  if (named.sessionIndexes.length === 0) return true;
  return signedIn.sessionIndex !== undefined && named.sessionIndexes.includes(signedIn.sessionIndex);
}

function requireSignature(message: SamlLogoutMessage, appId: string): void {
  const { fields } = message;
  if (fields.Signature === undefined || fields.SigAlg === undefined) throw new ProviderError('failed', `${appId}: the LogoutRequest is not signed`);
}

export async function acceptLogoutRequest(sp: SAML, message: SamlLogoutMessage, checks: Checks): Promise<AcceptedLogoutRequest> {
  const { fields } = message;
  if (fields.SAMLRequest === undefined) throw new ProviderError('failed', `${checks.appId}: the SLS got no LogoutRequest`);
  requireSignature(message, checks.appId);
  const { id, issuedAt, named } = checkedMessage(fields.SAMLRequest, checks);
  const refused = (error: unknown) => new ProviderError('failed', `${checks.appId}: the LogoutRequest was refused: ${error instanceof Error ? error.message : String(error)}`);
  const request = await sp.validateRedirectAsync(fields, message.rawQuery).then(
    ({ profile }) => profile,
    (error: unknown) => {
      throw refused(error);
    },
  );
  if (!request) throw refused('no LogoutRequest');
  return {
    requestId: id,
    usableUntil: new Date(issuedAt + checks.allowedClockDriftSeconds * 1000),
    names: (signedIn) => namesSignIn(named, signedIn, checks),
    async answerUrl(ended) {
      // node-saml's answer for a request that ended nothing is Requester/UnknownPrincipal.
      try {
        return await sp.getLogoutResponseUrlAsync(request, fields.RelayState ?? '', {}, ended);
      } catch (error) {
        throw refused(error);
      }
    },
  };
}
