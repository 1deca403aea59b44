/**
 * A real SAML 2.0 identity provider on loopback, for the service provider's tests and browser
 * journeys: it publishes metadata, takes AuthnRequests at /sso (HTTP-Redirect, and HTTP-POST) and
 * answers with a browser page that posts a signed Response to the service provider's ACS URL, as
 * Okta, Entra ID or Shibboleth do. It trusts only what it was told, as an administrator would have
 * configured it: the service provider's metadata (importSpMetadata) and who is signed in
 * (signInAs). Tests that need a response the server would never send build one with responseXml().
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestKeyPair, type TestKeyPair } from './saml-keys.js';
import {
  decodeSamlMessage,
  idpMetadataXml,
  readAuthnRequestXml,
  readRedirectAuthnRequest,
  readSpMetadata,
  signedLogoutRequestUrl,
  verifyRedirectSignature,
  type ImportedSpMetadata,
  type LogoutRequestOptions,
  type ReadAuthnRequest,
} from './saml-messages.js';
import { buildSamlResponse, type SamlPerson, type SamlResponseOptions } from './saml-response.js';
import { verifyPostSignature } from './saml-post-binding.js';
import { escapeXml } from './saml-xml.js';

export type { SamlPerson, SamlResponseOptions } from './saml-response.js';
export type { ImportedSpMetadata, LogoutRequestOptions, ReadAuthnRequest } from './saml-messages.js';
export type { TestKeyPair } from './saml-keys.js';

export interface SignInOptions {
  /** Encrypt the assertion when the service provider's metadata has an encryption certificate (overrides the server's option). */
  encryptAssertions?: boolean;
  /** How /sso signs its responses for this person; 'assertion' by default. */
  sign?: SamlResponseOptions['sign'];
}

export interface TestSamlIdpOptions {
  /** The interface to listen on and the host in its URLs; 127.0.0.1 by default. */
  host?: string;
  /** The clock of the responses /sso sends; the wall clock by default. */
  now?: () => Date;
  /** `${origin}/metadata` by default. */
  entityId?: string;
  /** Encrypt /sso's assertions when the service provider's metadata has an encryption certificate. */
  encryptAssertions?: boolean;
}

export interface TestSamlIdp {
  readonly origin: string;
  readonly entityId: string;
  readonly metadataUrl: string;
  readonly ssoUrl: string;
  readonly sloUrl: string;
  readonly keys: TestKeyPair;
  metadataXml(): string;
  responseXml(options: SamlResponseOptions): string;
  responseBase64(options: SamlResponseOptions): string;
  /** Reads an AuthnRequest from an SP's Redirect-binding URL (SAMLRequest deflated+base64, RelayState, SigAlg/Signature). */
  readAuthnRequest(url: string | URL): ReadAuthnRequest;
  /** Imports the SP's metadata XML (what an IdP admin does): entityID, ACS URL (HTTP-POST), signing and encryption certs, SLS URL. */
  importSpMetadata(xml: string): ImportedSpMetadata;
  /** The person the browser is signed in as at the IdP (GET /sso answers for them). */
  signInAs(person: SamlPerson, options?: SignInOptions): void;
  /** A signed Redirect-binding LogoutRequest URL to the SP's SLS (for single-logout tests). */
  logoutRequestUrl(options: LogoutRequestOptions): string;
  close(): Promise<void>;
}

/** A refusal the identity provider shows the browser, as a 400 page. */
class SsoRefusal extends Error {}

function hostInUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(body);
}

/**
 * The page that carries the Response to the service provider, as identity providers do it: a form
 * the script submits at once, with a button for a browser without JavaScript. It is the identity
 * provider's page, so it sends no Content-Security-Policy that would stop its inline script.
 */
export function autoPostPage(acsUrl: string, fields: Record<string, string>): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeXml(name)}" value="${escapeXml(value)}">`)
    .join('\n');
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8"><title>Signing you in</title></head><body>',
    `<form method="post" action="${escapeXml(acsUrl)}">`,
    inputs,
    '<noscript><p>JavaScript is off: press the button to continue.</p><button type="submit">Continue</button></noscript>',
    '</form>',
    '<script>document.forms[0].submit();</script>',
    '</body></html>',
  ].join('\n');
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 1_000_000) throw new SsoRefusal('The request body is too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startTestSamlIdp(options: TestSamlIdpOptions = {}): Promise<TestSamlIdp> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? ((): Date => new Date());
  const keys = createTestKeyPair('Latchkey test SAML IdP');
  let sp: ImportedSpMetadata | undefined;
  let signedIn: { person: SamlPerson; options: SignInOptions } | undefined;

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (error instanceof SsoRefusal) send(res, 400, 'text/plain; charset=utf-8', error.message);
      else send(res, 500, 'text/plain; charset=utf-8', String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const origin = `http://${hostInUrl(host)}:${(server.address() as AddressInfo).port}`;
  const entityId = options.entityId ?? `${origin}/metadata`;
  const urls = { metadataUrl: `${origin}/metadata`, ssoUrl: `${origin}/sso`, sloUrl: `${origin}/slo` };

  function responseXml(responseOptions: SamlResponseOptions): string {
    return buildSamlResponse(responseOptions, { issuer: entityId, signingKey: keys });
  }

  /** What /sso does once the request is read, whichever binding brought it. */
  function answerAuthnRequest(res: ServerResponse, request: Omit<ReadAuthnRequest, 'signed'>, signatureValid: boolean | undefined): void {
    if (sp === undefined) throw new SsoRefusal('No service provider is configured: call importSpMetadata first');
    if (signatureValid === false) throw new SsoRefusal('The AuthnRequest signature does not verify');
    if (signatureValid === undefined && sp.authnRequestsSigned) throw new SsoRefusal('The service provider signs its requests, and this one is unsigned');
    if (request.issuer !== sp.entityId) throw new SsoRefusal(`Unknown service provider ${request.issuer}`);
    const acsUrl = request.acsUrl ?? sp.acsUrl;
    if (acsUrl !== sp.acsUrl) throw new SsoRefusal(`The ACS URL ${acsUrl} is not the one registered for ${sp.entityId}`);
    if (signedIn === undefined) throw new SsoRefusal('Nobody is signed in at the identity provider: call signInAs first');
    const encrypt = signedIn.options.encryptAssertions ?? options.encryptAssertions ?? false;
    const xml = responseXml({
      acsUrl,
      audience: sp.entityId,
      person: signedIn.person,
      now: now(),
      inResponseTo: request.id,
      sign: signedIn.options.sign ?? 'assertion',
      ...(encrypt && sp.encryptionCertificate !== undefined ? { encryptFor: sp.encryptionCertificate } : {}),
    });
    const fields: Record<string, string> = { SAMLResponse: Buffer.from(xml, 'utf8').toString('base64') };
    if (request.relayState !== undefined) fields.RelayState = request.relayState;
    send(res, 200, 'text/html; charset=utf-8', autoPostPage(acsUrl, fields));
  }

  /**
   * A signature is checked only when the service provider's metadata gives a certificate to check
   * it with; then a wrong one is refused. Undefined means "not signed".
   */
  function redirectSignatureState(url: URL, signed: boolean): boolean | undefined {
    if (!signed) return undefined;
    if (sp?.signingCertificate === undefined) return true;
    return verifyRedirectSignature(url, sp.signingCertificate);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    if (req.method === 'GET' && url.pathname === '/metadata') {
      send(res, 200, 'application/samlmetadata+xml; charset=utf-8', handle.metadataXml());
    } else if (req.method === 'GET' && url.pathname === '/sso') {
      let request: ReadAuthnRequest;
      try {
        request = readRedirectAuthnRequest(url);
      } catch (error) {
        throw new SsoRefusal(`Unreadable AuthnRequest: ${(error as Error).message}`);
      }
      answerAuthnRequest(res, request, redirectSignatureState(url, request.signed));
    } else if (req.method === 'POST' && url.pathname === '/sso') {
      const form = await readForm(req);
      const encoded = form.get('SAMLRequest');
      if (encoded === null) throw new SsoRefusal('The form has no SAMLRequest');
      let xml: string;
      let request: Omit<ReadAuthnRequest, 'relayState' | 'signed'>;
      try {
        xml = decodeSamlMessage(encoded);
        request = readAuthnRequestXml(xml);
      } catch (error) {
        throw new SsoRefusal(`Unreadable AuthnRequest: ${(error as Error).message}`);
      }
      const signatureValid = verifyPostSignature(xml, sp?.signingCertificate);
      answerAuthnRequest(res, { ...request, relayState: form.get('RelayState') ?? undefined }, signatureValid);
    } else if (req.method === 'GET' && url.pathname === '/slo') {
      send(res, 200, 'text/plain; charset=utf-8', 'logged out');
    } else {
      send(res, 404, 'text/plain; charset=utf-8', 'not found');
    }
  }

  const handle: TestSamlIdp = {
    origin,
    entityId,
    ...urls,
    keys,
    metadataXml: () => idpMetadataXml({ entityId, ssoUrl: urls.ssoUrl, sloUrl: urls.sloUrl, certificate: keys.certificate }),
    responseXml,
    responseBase64: (responseOptions) => Buffer.from(responseXml(responseOptions), 'utf8').toString('base64'),
    readAuthnRequest: readRedirectAuthnRequest,
    importSpMetadata(xml) {
      sp = readSpMetadata(xml);
      return { ...sp };
    },
    signInAs(person, signInOptions = {}) {
      signedIn = { person, options: signInOptions };
    },
    logoutRequestUrl: (logout) => signedLogoutRequestUrl({ ...logout, issuer: entityId, key: keys }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A browser keeps connections alive; without this, close() would wait for them to time out.
        server.closeAllConnections();
      }),
  };
  return handle;
}
