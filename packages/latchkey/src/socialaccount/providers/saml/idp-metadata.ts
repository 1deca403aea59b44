/**
 * An identity provider's metadata (SAML 2.0 Metadata, §2.4.3 IDPSSODescriptor): where its
 * single sign-on and logout services are, and the certificates it signs with. Read from the app's
 * inline settings, or fetched from its metadata_url (with its own timeout, no redirect followed,
 * the size capped) and kept for metadata_cache_timeout, so that a sign-in does not wait on the IdP
 * and a rotated key is picked up without a restart.
 */
import type { Clock } from '../../../core/clock.js';
import { requestOnce } from '../oauth2-requests.js';
import { ProviderError, type ProviderHttp } from '../provider.js';
import { SECURE_URL_RULE, secureUrl } from '../secure-url.js';
import type { SamlIdpOptions } from './settings.js';
import { attributeOf, children, descendants, onlyChild, parseXml, REDIRECT_BINDING, SAML_METADATA, textOf, XML_DSIG } from './xml.js';


/** What signing in and out needs from the IdP. */
export interface IdpEndpoints {
  ssoUrl: URL;
  sloUrl?: URL;
  /** Bare base64 DER, as in metadata; node-saml takes them so. */
  certificates: string[];
}

/** The IdP's metadata as its endpoints; throws ProviderError('failed') for a document that is not this IdP's or lacks them. */
export function readIdpMetadata(appId: string, entityId: string, xml: string): IdpEndpoints {
  const fail = (why: string) => new ProviderError('failed', `${appId}: the IdP metadata ${why}`);
  const document = parseXml(xml);
  if (!document) throw fail('is not well-formed XML');
  const descriptors = descendants(document, SAML_METADATA, 'EntityDescriptor').filter((descriptor) => attributeOf(descriptor, 'entityID') === entityId);
  if (descriptors.length !== 1) throw fail(`describes no single entity "${entityId}" (idp.entity_id)`);
  const idp = onlyChild(descriptors[0]!, SAML_METADATA, 'IDPSSODescriptor');
  if (!idp) throw fail('has no single IDPSSODescriptor');
  const redirectLocation = (service: string): URL | undefined => {
    const location = children(idp, SAML_METADATA, service).find((element) => attributeOf(element, 'Binding') === REDIRECT_BINDING);
    const value = location && attributeOf(location, 'Location');
    if (value === undefined) return undefined;
    const url = secureUrl(value);
    if (!url) throw fail(`gives ${service} ${JSON.stringify(value)}, which is not an https URL (${SECURE_URL_RULE})`);
    return url;
  };
  const ssoUrl = redirectLocation('SingleSignOnService');
  if (!ssoUrl) throw fail('has no HTTP-Redirect SingleSignOnService');
  // A KeyDescriptor without `use` serves both signing and encryption (Metadata §2.4.1.1).
  const certificates = children(idp, SAML_METADATA, 'KeyDescriptor')
    .filter((key) => (attributeOf(key, 'use') ?? 'signing') === 'signing')
    .flatMap((key) => descendants(key, XML_DSIG, 'X509Certificate').map((element) => textOf(element).replace(/\s+/g, '')))
    .filter((body) => body !== '');
  if (certificates.length === 0) throw fail('has no signing certificate');
  return { ssoUrl, sloUrl: redirectLocation('SingleLogoutService'), certificates };
}

/**
 * The IdP's endpoints for one app: the inline ones, or its metadata's, fetched at most once per
 * metadata_cache_timeout. A failed fetch is not cached, so the next sign-in tries again; while a
 * fetch is on its way, others wait for it rather than start their own.
 */
export function idpEndpointsSource(appId: string, idp: SamlIdpOptions, http: ProviderHttp, clock: Clock): () => Promise<IdpEndpoints> {
  const metadataUrl = idp.metadataUrl;
  if (metadataUrl === undefined) {
    const inline: IdpEndpoints = { ssoUrl: idp.ssoUrl!, sloUrl: idp.sloUrl, certificates: idp.certificates };
    return () => Promise.resolve(inline);
  }
  let cached: { endpoints: IdpEndpoints; until: number } | undefined;
  let inFlight: Promise<IdpEndpoints> | undefined;
  const fetchOnce = async (): Promise<IdpEndpoints> => {
    const answer = await requestOnce(appId, 'IdP metadata request', metadataUrl, { method: 'GET', headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } }, {
      ...http,
      timeoutSeconds: idp.metadataRequestTimeoutSeconds,
    });
    if (answer.status !== 200) throw new ProviderError('failed', `${appId}: the IdP metadata request to ${answer.where} answered HTTP ${answer.status}`);
    const endpoints = readIdpMetadata(appId, idp.entityId, answer.text);
    // Certificates listed inline as well are kept: an operator may pin the next key before the IdP publishes it.
    return { ...endpoints, sloUrl: idp.sloUrl ?? endpoints.sloUrl, certificates: [...new Set([...endpoints.certificates, ...idp.certificates])] };
  };
  return async () => {
    if (cached && cached.until > clock.now().getTime()) return cached.endpoints;
    inFlight ??= fetchOnce().finally(() => {
      inFlight = undefined;
    });
    const endpoints = await inFlight;
    cached = { endpoints, until: clock.now().getTime() + idp.metadataCacheTimeoutSeconds * 1000 };
    return endpoints;
  };
}
