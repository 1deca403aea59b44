/**
 * SAML 2.0 single sign-on (allauth's `saml` provider), with @node-saml/node-saml as the service
 * provider library: one app per organisation, its slug (client_id) in the URLs under
 * saml/<org>/ (saml_login, saml_acs, ...), its id (provider_id) the IdP's entity id. The sign-in starts as every
 * other (flows/provider-login.ts keeps the state in the browser's session); the AuthnRequest's ID
 * is derived from that state, so the response's InResponseTo finds it again at the ACS.
 */
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml';
// node-saml's own metadata signer (what its signMetadata option calls), reached by path: the
// metadata is signed after the SLS binding is corrected, which that option cannot do.
import { signXmlMetadata } from '@node-saml/node-saml/lib/utility.js';
import { XMLSerializer } from '@xmldom/xmldom';
import type { Settings } from '../../../config/settings.js';
import { latchkeyUrls } from '../../../config/url-names.js';
import { LatchkeyError } from '../../../core/errors.js';
import type { ProviderApp } from '../../apps.js';
import type { ProviderContext, ProviderKind } from '../kind.js';
import { ProviderError, samlRequestId, type SignInProvider, type SamlServiceProvider } from '../provider.js';
import { secureUrl } from '../secure-url.js';
import { profileFromAssertion } from './attributes.js';
import { idpEndpointsSource, type IdpEndpoints } from './idp-metadata.js';
import { acceptLogoutRequest } from './logout.js';
import { verifySamlResponse } from './response.js';
import { descendants, parseXml, REDIRECT_BINDING, SAML_METADATA } from './xml.js';
import { checkSamlApp, checkSamlSettings, samlOptions, type SamlOptions } from './settings.js';

/** The app's URLs under SITE_URL (never the request's Host header), by allauth's names. */
export function samlUrls(settings: Pick<Settings, 'SITE_URL' | 'ADMIN_URL' | 'URL_PREFIX'>, organization: string): { login: string; acs: string; acsFinish: string; sls: string; metadata: string } {
  const urls = latchkeyUrls(settings);
  const at = (name: 'saml_login' | 'saml_acs' | 'saml_finish_acs' | 'saml_sls' | 'saml_metadata') => new URL(urls.urlFor(name, { organization }), settings.SITE_URL).toString();
  return { login: at('saml_login'), acs: at('saml_acs'), acsFinish: at('saml_finish_acs'), sls: at('saml_sls'), metadata: at('saml_metadata') };
}

export const samlProviderKind: ProviderKind = {
  id: 'saml',
  name: 'SAML 2.0',
  checkSettings: checkSamlSettings,
  checkApp: checkSamlApp,
  checkStored: (app) =>
    (app.settings.advanced as Record<string, unknown> | undefined)?.private_key === undefined
      ? undefined
      : { key: 'advanced', reason: 'invalid', message: "advanced.private_key would be stored unencrypted: give the service provider's private key as the app's secret, which is sealed" },
  // The metadata is the one URL of the IdP the server itself requests; the others are the browser's.
  endpoints: (settings) => {
    const metadataUrl = secureUrl((settings.idp as Record<string, unknown> | undefined)?.metadata_url);
    return metadataUrl === undefined ? [] : [{ setting: 'idp.metadata_url', url: metadataUrl }];
  },
  build: (app, context) => samlProvider(app, context),
};

/**
 * node-saml's names for the algorithms the settings name as python3-saml does. node-saml takes the
 * digest by its short name too ('sha256', as the settings spell it) and reads anything else,
 * a URI included, as SHA-1 (its lib/algorithms.js).
 */
const NODE_SAML_SIGNATURE = { 'rsa-sha256': 'sha256', 'rsa-sha512': 'sha512', 'rsa-sha1': 'sha1' } as const;

export function samlProvider(app: Pick<ProviderApp, 'id' | 'name' | 'clientId' | 'settings' | 'secret'>, context: Pick<ProviderContext, 'settings' | 'clock' | 'http'>): SignInProvider {
  const options = samlOptions(app);
  const urls = samlUrls(context.settings, app.clientId);
  const spEntityId = options.spEntityId ?? urls.metadata;
  const idpEndpoints = idpEndpointsSource(app.id, options.idp, context.http, context.clock);
  const fail = (why: string) => new ProviderError('failed', `${app.id}: ${why}`);
  const logoutChecks = { appId: app.id, slsUrl: urls.sls, allowedClockDriftSeconds: options.advanced.allowedClockDriftSeconds, idpEntityId: options.idp.entityId, spEntityId };

  /** node-saml for messages we send (AuthnRequests, logout answers) and logout messages we receive. */
  const messages = (idp: IdpEndpoints, requestId?: string): SAML =>
    new SAML({
      ...baseOptions(options, spEntityId, urls.acs),
      idpCert: idp.certificates,
      idpIssuer: options.idp.entityId,
      entryPoint: idp.ssoUrl.toString(),
      ...(idp.sloUrl === undefined ? {} : { logoutUrl: idp.sloUrl.toString() }),
      logoutCallbackUrl: urls.sls,
      // node-saml would read the wall clock: logout.ts holds a logout message's IssueInstant to Latchkey's.
      acceptedClockSkewMs: -1,
      validateInResponseTo: ValidateInResponseTo.never,
      ...(requestId === undefined ? {} : { generateUniqueId: () => requestId }),
      ...(options.advanced.authnRequestSigned ? signing(options) : {}),
    });

  const saml: SamlServiceProvider = {
    organization: app.clientId,
    rejectsUnsolicited: options.advanced.rejectIdpInitiatedSso,

    metadata() {
      const { certificate, privateKey } = options.advanced;
      // Always a fresh SAML: the metadata needs no IdP, so it is served even while the IdP's metadata cannot be fetched.
      const base = baseOptions(options, spEntityId, urls.acs);
      const sp = new SAML({ ...base, idpCert: 'unused', logoutCallbackUrl: urls.sls, ...(privateKey === undefined ? {} : { decryptionPvk: privateKey, ...signing(options) }) });
      const metadata = correctedMetadata(sp.generateServiceProviderMetadata(certificate ?? null, certificate ?? null), options.advanced.authnRequestSigned);
      // An SP with its own key signs its metadata (with the signature and digest algorithms of the
      // settings), so an IdP that fetches it by URL can tell it has not been altered on the way.
      if (privateKey === undefined) return metadata;
      return signXmlMetadata(metadata, { ...signing(options), signatureAlgorithm: base.signatureAlgorithm, digestAlgorithm: base.digestAlgorithm });
    },

    async verifyResponse(samlResponse, expected) {
      const verified = await verifySamlResponse(app.id, options, await idpEndpoints(), samlResponse, { ...expected, spEntityId, acsUrl: urls.acs });
      const profile = { ...profileFromAssertion(app.id, options, verified.person), samlSubject: verified.subject };
      return { profile, assertionId: verified.assertionId, usableUntil: verified.usableUntil };
    },

    async answerLogoutRequest(message, now) {
      return acceptLogoutRequest(messages(await idpEndpoints()), message, { ...logoutChecks, now });
    },
  };

  return {
    protocol: 'saml',
    id: app.id,
    type: 'saml',
    name: app.name,
    saml,
    async authorizationOrigin() {
      return (await idpEndpoints()).ssoUrl.origin;
    },
    async authorizationUrl({ state }) {
      const idp = await idpEndpoints();
      try {
        const url = await messages(idp, samlRequestId(state)).getAuthorizeUrlAsync('', undefined, {});
        return { url: new URL(url), pending: {} };
      } catch (error) {
        throw fail(`the AuthnRequest could not be made: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  };
}

function baseOptions(options: SamlOptions, spEntityId: string, acsUrl: string) {
  return {
    issuer: spEntityId,
    callbackUrl: acsUrl,
    audience: spEntityId,
    wantAssertionsSigned: options.advanced.wantAssertionSigned,
    wantAuthnResponseSigned: options.advanced.wantMessageSigned,
    identifierFormat: options.advanced.nameIdFormat ?? null,
    // allauth sends no RequestedAuthnContext: the IdP's own policy (MFA there, say) decides.
    disableRequestedAuthnContext: true,
    signatureAlgorithm: NODE_SAML_SIGNATURE[options.advanced.signatureAlgorithm],
    digestAlgorithm: options.advanced.digestAlgorithm,
  };
}

/** The SP's key for signing what it sends; the settings' checks guarantee it where signing is asked for. */
function signing(options: SamlOptions): { privateKey: string; publicCert: string } {
  const { privateKey, certificate } = options.advanced;
  if (privateKey === undefined || certificate === undefined) throw new LatchkeyError('configuration_invalid', "A SAML app signs its requests only with its certificate (advanced.x509cert) and private key (the app's secret, or advanced.private_key).");
  return { privateKey, publicCert: certificate };
}

/**
 * node-saml's metadata, made true to what Latchkey does (before it is signed):
 * - it offers the SLS over HTTP-POST, which a browser reaches from the IdP's site without our
 *   SameSite=Lax session cookie, so a logout there could sign nobody out: the SLS offered is the
 *   HTTP-Redirect one, the binding it serves;
 * - it says AuthnRequestsSigned="true" whenever the SP has a key, yet a key kept only to decrypt
 *   assertions signs nothing: an IdP that believed it would refuse the unsigned requests.
 */
function correctedMetadata(metadata: string, authnRequestsSigned: boolean): string {
  const document = parseXml(metadata);
  if (!document) throw new LatchkeyError('configuration_invalid', 'The SAML service provider metadata could not be generated.');
  for (const service of descendants(document, SAML_METADATA, 'SingleLogoutService')) service.setAttribute('Binding', REDIRECT_BINDING);
  for (const descriptor of descendants(document, SAML_METADATA, 'SPSSODescriptor')) descriptor.setAttribute('AuthnRequestsSigned', String(authnRequestsSigned));
  return new XMLSerializer().serializeToString(document);
}
