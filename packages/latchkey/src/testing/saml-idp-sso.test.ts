/**
 * The identity provider as a browser meets it: an AuthnRequest from a node-saml service provider
 * goes to /sso, and the page that comes back posts a Response node-saml accepts for that very
 * request; what an administrator did not configure is refused. Single logout likewise. Date is
 * frozen at NOW, as node-saml reads the wall clock.
 */
import { generateServiceProviderMetadata, SAML, ValidateInResponseTo, type SamlConfig } from '@node-saml/node-saml';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestSamlIdp, type TestSamlIdp } from './saml-idp.js';
import { createTestKeyPair } from './saml-keys.js';
import { verifyRedirectSignature } from './saml-messages.js';

const NOW = new Date('2031-03-14T09:26:53.000Z');
const SP_ENTITY_ID = 'https://sp.example.test/accounts/saml/acme/metadata/';
const ACS_URL = 'https://sp.example.test/accounts/saml/acme/acs/';
const SLS_URL = 'https://sp.example.test/accounts/saml/acme/sls/';
const ALICE = { nameId: 'alice@example.com', sessionIndex: '_session-7' };

const spKeys = createTestKeyPair('sp.example.test');
let idp: TestSamlIdp;

beforeAll(async () => {
  idp = await startTestSamlIdp({ now: () => NOW });
});
afterAll(async () => {
  await idp.close();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
  idp.importSpMetadata(spMetadata({ signs: true, encrypts: true }));
  idp.signInAs(ALICE);
});
afterEach(() => {
  vi.useRealTimers();
});

function spMetadata(options: { signs: boolean; encrypts: boolean }): string {
  return generateServiceProviderMetadata({
    issuer: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    logoutCallbackUrl: SLS_URL,
    ...(options.signs ? { privateKey: spKeys.privateKey, publicCerts: spKeys.certificate } : {}),
    ...(options.encrypts ? { decryptionPvk: spKeys.privateKey, decryptionCert: spKeys.certificate } : {}),
  });
}

/** The service provider: signs its AuthnRequests with its key, and checks InResponseTo against the requests it sent. */
function serviceProvider(overrides: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    idpCert: idp.keys.certificate,
    issuer: SP_ENTITY_ID,
    audience: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    entryPoint: idp.ssoUrl,
    privateKey: spKeys.privateKey,
    signatureAlgorithm: 'sha256',
    decryptionPvk: spKeys.privateKey,
    validateInResponseTo: ValidateInResponseTo.always,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    ...overrides,
  });
}

/** The hidden fields of the page's form, and where it posts them. */
function readAutoPostPage(html: string): { action: string; fields: Record<string, string> } {
  const unescape = (value: string): string =>
    value.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const action = /<form method="post" action="([^"]*)">/.exec(html)?.[1];
  if (action === undefined) throw new Error(`No form in the page: ${html}`);
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) fields[unescape(match[1]!)] = unescape(match[2]!);
  return { action: unescape(action), fields };
}

describe('GET /sso, SP-initiated', () => {
  it('answers a signed AuthnRequest with a page posting a Response node-saml accepts for that request, once', async () => {
    const sp = serviceProvider();
    const authorizeUrl = await sp.getAuthorizeUrlAsync('relay-123', undefined, {});
    const request = idp.readAuthnRequest(authorizeUrl);
    expect(request).toMatchObject({ acsUrl: ACS_URL, issuer: SP_ENTITY_ID, relayState: 'relay-123', signed: true });
    expect(request.id).toMatch(/^_/);

    const page = await fetch(authorizeUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBeNull();
    const html = await page.text();
    expect(html).toContain('<script>document.forms[0].submit();</script>');
    expect(html).toMatch(/<noscript>.*<button type="submit">/s);
    const { action, fields } = readAutoPostPage(html);
    expect(action).toBe(ACS_URL);
    expect(fields.RelayState).toBe('relay-123');

    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: fields.SAMLResponse! });
    expect(profile).toMatchObject({ nameID: 'alice@example.com', sessionIndex: '_session-7', inResponseTo: request.id, issuer: idp.entityId });
    // node-saml forgets a request ID once answered: the same Response replayed is refused.
    await expect(sp.validatePostResponseAsync({ SAMLResponse: fields.SAMLResponse! })).rejects.toThrow(/InResponseTo is not valid/);
  });

  it('encrypts the assertion when asked and the service provider published an encryption certificate', async () => {
    idp.signInAs(ALICE, { encryptAssertions: true, sign: 'both' });
    const sp = serviceProvider({ wantAuthnResponseSigned: true });
    const { fields } = readAutoPostPage(await (await fetch(await sp.getAuthorizeUrlAsync('', undefined, {}))).text());
    expect(Buffer.from(fields.SAMLResponse!, 'base64').toString('utf8')).toContain('EncryptedAssertion');
    expect(fields.RelayState).toBeUndefined();
    await expect(sp.validatePostResponseAsync({ SAMLResponse: fields.SAMLResponse! })).resolves.toMatchObject({ profile: { nameID: 'alice@example.com' } });
  });

  it('accepts an unsigned request from a service provider that does not sign', async () => {
    idp.importSpMetadata(spMetadata({ signs: false, encrypts: false }));
    const sp = serviceProvider({ privateKey: undefined });
    const authorizeUrl = await sp.getAuthorizeUrlAsync('x', undefined, {});
    expect(idp.readAuthnRequest(authorizeUrl).signed).toBe(false);
    const { fields } = readAutoPostPage(await (await fetch(authorizeUrl)).text());
    await expect(sp.validatePostResponseAsync({ SAMLResponse: fields.SAMLResponse! })).resolves.toMatchObject({ profile: { nameID: 'alice@example.com' } });
  });

  it('refuses a request whose signature is wrong, or missing though the metadata promised one', async () => {
    const tampered = new URL(await serviceProvider().getAuthorizeUrlAsync('relay-123', undefined, {}));
    tampered.searchParams.set('RelayState', 'relay-456');
    const refused = await fetch(tampered);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/signature/);
    const otherKey = serviceProvider({ privateKey: createTestKeyPair('impostor.example.test').privateKey });
    expect((await fetch(await otherKey.getAuthorizeUrlAsync('r', undefined, {}))).status).toBe(400);
    const unsigned = serviceProvider({ privateKey: undefined });
    const stripped = await fetch(await unsigned.getAuthorizeUrlAsync('r', undefined, {}));
    expect(stripped.status).toBe(400);
    expect(await stripped.text()).toMatch(/unsigned/);
  });

  it('verifies the query as sent: node-saml signs RelayState re-encoded, so one with a space fails (keep RelayState URL-safe)', async () => {
    const authorizeUrl = await serviceProvider().getAuthorizeUrlAsync('a b', undefined, {});
    expect(verifyRedirectSignature(authorizeUrl, spKeys.certificate)).toBe(false);
    expect((await fetch(authorizeUrl)).status).toBe(400);
    const safeUrl = await serviceProvider().getAuthorizeUrlAsync('a-b_c.d', undefined, {});
    expect(verifyRedirectSignature(safeUrl, spKeys.certificate)).toBe(true);
  });

  it('refuses another ACS URL than the registered one, an unknown service provider, and nobody signed in', async () => {
    const elsewhere = serviceProvider({ callbackUrl: 'https://attacker.example.test/acs' });
    expect(await (await fetch(await elsewhere.getAuthorizeUrlAsync('r', undefined, {}))).text()).toMatch(/ACS URL/);
    idp.importSpMetadata(spMetadata({ signs: false, encrypts: false }));
    const stranger = serviceProvider({ issuer: 'https://stranger.example.test/metadata', privateKey: undefined });
    const unknown = await fetch(await stranger.getAuthorizeUrlAsync('r', undefined, {}));
    expect([unknown.status, await unknown.text()]).toEqual([400, 'Unknown service provider https://stranger.example.test/metadata']);
    const fresh = await startTestSamlIdp({ now: () => NOW });
    try {
      const url = new URL(await serviceProvider({ entryPoint: fresh.ssoUrl, privateKey: undefined }).getAuthorizeUrlAsync('r', undefined, {}));
      expect(await (await fetch(url)).text()).toMatch(/importSpMetadata/);
      fresh.importSpMetadata(spMetadata({ signs: false, encrypts: false }));
      expect(await (await fetch(url)).text()).toMatch(/signInAs/);
    } finally {
      await fresh.close();
    }
    expect((await fetch(`${idp.ssoUrl}?SAMLRequest=bm90IHhtbA`)).status).toBe(400);
  });
});

describe('POST /sso', () => {
  it('answers a signed HTTP-POST AuthnRequest, and refuses it tampered with', async () => {
    const sp = serviceProvider({ authnRequestBinding: 'HTTP-POST' });
    const message = await sp.getAuthorizeMessageAsync('relay-post', undefined, {});
    const post = (body: Record<string, string>): Promise<Response> =>
      fetch(idp.ssoUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
    const page = await post(message as Record<string, string>);
    expect(page.status).toBe(200);
    const { fields } = readAutoPostPage(await page.text());
    expect(fields.RelayState).toBe('relay-post');
    await expect(sp.validatePostResponseAsync({ SAMLResponse: fields.SAMLResponse! })).resolves.toMatchObject({ profile: { nameID: 'alice@example.com' } });

    const other = await serviceProvider({ authnRequestBinding: 'HTTP-POST', skipRequestCompression: true }).getAuthorizeMessageAsync('r', undefined, {});
    const xml = Buffer.from(other.SAMLRequest as string, 'base64').toString('utf8');
    const forged = xml.replace(`AssertionConsumerServiceURL="${ACS_URL}"`, 'AssertionConsumerServiceURL="https://attacker.example.test/acs"');
    expect(forged).not.toBe(xml);
    expect(await (await post({ SAMLRequest: Buffer.from(forged).toString('base64') })).text()).toMatch(/signature/);
  });
});

describe('single logout', () => {
  it('sends a signed LogoutRequest node-saml accepts, and refuses it altered', async () => {
    const url = new URL(idp.logoutRequestUrl({ slsUrl: SLS_URL, nameId: 'alice@example.com', sessionIndex: '_session-7', now: NOW }));
    expect(`${url.origin}${url.pathname}`).toBe(SLS_URL);
    const sp = serviceProvider({ idpIssuer: idp.entityId });
    const query = Object.fromEntries(url.searchParams);
    const { profile, loggedOut } = await sp.validateRedirectAsync(query, url.search.slice(1));
    expect(loggedOut).toBe(true);
    expect(profile).toMatchObject({ nameID: 'alice@example.com', sessionIndex: '_session-7', issuer: idp.entityId });

    const altered = url.search.slice(1).replace(/Signature=[^&]*/, `Signature=${encodeURIComponent(Buffer.alloc(256, 1).toString('base64'))}`);
    await expect(sp.validateRedirectAsync(Object.fromEntries(new URLSearchParams(altered)), altered)).rejects.toThrow(/signature/i);
  });

  it('answers GET /slo with "logged out", and an unknown path with 404', async () => {
    const slo = await fetch(idp.sloUrl);
    expect([slo.status, await slo.text()]).toEqual([200, 'logged out']);
    expect((await fetch(`${idp.origin}/nowhere`)).status).toBe(404);
  });
});
