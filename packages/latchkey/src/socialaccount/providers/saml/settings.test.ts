/**
 * What an operator is told for each mistake in a SAML app's settings: one message naming the key
 * to fix (inner keys by their path, `idp.entity_id`), the same wherever the app arrives (start-up
 * stops with it); the defaults a good app gets; and apps.ts's rule that a SAML app's provider_id is
 * the IdP's entity id (a URL, usually) while its client_id is the organisation slug in our URLs.
 */
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../../core/errors.js';
import { createTestLatchkey } from '../../../testing/latchkey.js';
import { createTestKeyPair } from '../../../testing/saml-keys.js';
import { appsFromSettings, checkAppEntry } from '../../apps.js';
import { samlProviderKind } from './provider.js';
import { DEFAULT_ATTRIBUTE_MAPPING, normalizedPem, samlOptions } from './settings.js';

const keys = createTestKeyPair('Settings test');
const IDP = { entity_id: 'https://idp.example/metadata', sso_url: 'https://idp.example/sso', x509cert: keys.certificate };
const OWN_KEYS = { x509cert: keys.certificate, private_key: keys.privateKey };

/** The problem start-up and the stored apps' flow find with an app of these settings (and this secret): its settings' shape first, then the rules that need the secret. */
const problemOf = (settings: Record<string, unknown>, secret = '') => samlProviderKind.checkSettings(settings) ?? samlProviderKind.checkApp?.({ settings, secret, key: '' });
const messageOf = (settings: Record<string, unknown>, secret = '') => problemOf(settings, secret)?.message;

describe("a SAML app's settings", () => {
  it('takes an inline IdP or one known by its metadata URL, and gives allauth’s defaults', () => {
    expect(messageOf({ idp: IDP })).toBeUndefined();
    expect(messageOf({ idp: { entity_id: 'urn:example:idp', metadata_url: 'http://127.0.0.1:8080/metadata' } })).toBeUndefined();
    expect(messageOf({ idp: { ...IDP, x509cert: [keys.certificate, keys.certificate] }, advanced: { ...OWN_KEYS, authn_request_signed: true, want_assertion_encrypted: true } })).toBeUndefined();
    expect(messageOf({ idp: IDP, advanced: { signature_algorithm: 'rsa-sha1', reject_deprecated_algorithm: false } })).toBeUndefined();

    const options = samlOptions({ id: IDP.entity_id, settings: { idp: IDP }, secret: '' });
    expect(options).toMatchObject({ spEntityId: undefined, useNameIdForEmail: false, attributeMapping: DEFAULT_ATTRIBUTE_MAPPING });
    expect(options.idp).toMatchObject({ entityId: IDP.entity_id, ssoUrl: new URL(IDP.sso_url), metadataRequestTimeoutSeconds: 10, metadataCacheTimeoutSeconds: 4 * 3600 });
    expect(options.advanced).toMatchObject({
      rejectIdpInitiatedSso: true,
      rejectDeprecatedAlgorithm: true,
      allowedClockDriftSeconds: 300,
      signatureAlgorithm: 'rsa-sha256',
      digestAlgorithm: 'sha256',
      authnRequestSigned: false,
      wantAssertionEncrypted: false,
    });
    // A field the mapping names as one attribute is a list of one; the fields it leaves out keep their defaults.
    expect(samlOptions({ id: 'x', settings: { idp: IDP, attribute_mapping: { uid: 'employeeNumber' } }, secret: '' }).attributeMapping).toEqual({ ...DEFAULT_ATTRIBUTE_MAPPING, uid: ['employeeNumber'] });
  });

  it.each([
    ['no idp', {}, 'idp', 'an idp is required for saml (the identity provider: its entity_id, and a metadata_url or an sso_url with its x509cert)'],
    ['an idp without entity_id', { idp: { ...IDP, entity_id: undefined } }, 'idp', 'idp.entity_id is required'],
    ['an idp with neither metadata_url nor sso_url', { idp: { entity_id: IDP.entity_id, x509cert: keys.certificate } }, 'idp', 'idp needs a metadata_url, or an sso_url and its x509cert'],
    ['an sso_url without its certificate', { idp: { ...IDP, x509cert: undefined } }, 'idp', 'idp needs a metadata_url, or an sso_url and its x509cert'],
    ['certificate text that is no certificate', { idp: { ...IDP, x509cert: 'paste the certificate here' } }, 'idp', 'idp.x509cert must be a PEM certificate (-----BEGIN CERTIFICATE-----)'],
    ['a bad certificate in a rotation list', { idp: { ...IDP, x509cert: [keys.certificate, keys.privateKey] } }, 'idp', 'idp.x509cert[1] must be a PEM certificate (-----BEGIN CERTIFICATE-----)'],
    ['a plain http IdP elsewhere than loopback', { idp: { ...IDP, sso_url: 'http://idp.example/sso' } }, 'idp', 'idp.sso_url "http://idp.example/sso" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only)'],
    ['a mapping of a field Latchkey does not map', { idp: IDP, attribute_mapping: { email: 'mail', department: 'ou' } }, 'attribute_mapping', 'attribute_mapping.department is not a field Latchkey maps (uid, email, email_verified, first_name, last_name, username)'],
    ['a mapping to no attribute', { idp: IDP, attribute_mapping: { email: [] } }, 'attribute_mapping', 'attribute_mapping.email must be a non-empty string or a list of them'],
    [
      'SHA-1 without reject_deprecated_algorithm false',
      { idp: IDP, advanced: { digest_algorithm: 'sha1' } },
      'advanced',
      'SHA-1 is deprecated: advanced.signature_algorithm and digest_algorithm take it only with advanced.reject_deprecated_algorithm false',
    ],
    ['an unknown algorithm', { idp: IDP, advanced: { signature_algorithm: 'hmac-sha256' } }, 'advanced', 'advanced.signature_algorithm must be one of "rsa-sha256", "rsa-sha512", "rsa-sha1", not "hmac-sha256"'],
    ['signed requests without keys', { idp: IDP, advanced: { authn_request_signed: true } }, 'advanced', "advanced.authn_request_signed needs the service provider's own certificate (advanced.x509cert) and private key"],
    ['encrypted assertions without keys', { idp: IDP, advanced: { want_assertion_encrypted: true, private_key: keys.privateKey } }, 'advanced', "advanced.want_assertion_encrypted needs the service provider's own certificate (advanced.x509cert) and private key"],
    ['a private key without its certificate', { idp: IDP, advanced: { private_key: keys.privateKey } }, 'advanced', 'advanced.private_key needs its certificate, advanced.x509cert'],
    ['a certificate without its private key (nor a secret)', { idp: IDP, advanced: { x509cert: keys.certificate, want_assertion_encrypted: true } }, 'advanced', "advanced.x509cert needs the service provider's private key: the app's secret, or advanced.private_key"],
    ['a private key that is a certificate', { idp: IDP, advanced: { ...OWN_KEYS, private_key: keys.certificate } }, 'advanced', 'advanced.private_key must be a PEM private key (-----BEGIN PRIVATE KEY-----)'],
    ['a clock drift of an hour and more', { idp: IDP, advanced: { allowed_clock_drift: 7200 } }, 'advanced', 'advanced.allowed_clock_drift must be a whole number of seconds from 0 to 3600'],
    ['a boolean as text', { idp: IDP, use_nameid_for_email: 'true' }, 'use_nameid_for_email', 'use_nameid_for_email must be true or false, not a string'],
  ])('refuses %s with one message naming the key', (_case, settings, key, message) => {
    const problem = problemOf(settings);
    expect(problem).toMatchObject({ key, message });
    expect(problem?.reason).toBe(Object.keys(settings).length === 0 ? 'required' : 'invalid');
  });

  it("takes the service provider's private key from the app's secret, where a stored app keeps it sealed", () => {
    const settings = { idp: IDP, advanced: { x509cert: keys.certificate, authn_request_signed: true } };
    expect(messageOf(settings, keys.privateKey)).toBeUndefined();
    expect(samlOptions({ id: 'x', settings, secret: keys.privateKey }).advanced).toMatchObject({ certificate: normalizedPem(keys.certificate), privateKey: normalizedPem(keys.privateKey) });
    expect(problemOf(settings, 'not a key')).toEqual({ key: 'secret', reason: 'invalid', message: 'secret must be a PEM private key (-----BEGIN PRIVATE KEY-----)' });
    // Pasted into a one-line field, the key's line breaks became spaces: it is mended, not refused.
    const flattened = keys.privateKey.trim().replace(/\n/g, ' ');
    expect(messageOf(settings, flattened)).toBeUndefined();
    expect(samlOptions({ id: 'x', settings, secret: flattened }).advanced.privateKey).toBe(normalizedPem(keys.privateKey));
    // Another key than the certificate's would sign requests the IdP cannot verify.
    expect(problemOf(settings, createTestKeyPair('another service provider').privateKey)).toEqual({ key: 'secret', reason: 'invalid', message: 'secret is not the private key of advanced.x509cert' });
  });

  it('stops start-up with configuration_invalid naming the app and the key', async () => {
    const app = { provider_id: IDP.entity_id, name: 'Acme', client_id: 'acme', settings: { idp: { entity_id: IDP.entity_id, sso_url: IDP.sso_url } } };
    // The refusal comes before any database work, so an in-memory SQLite one is all this needs.
    const refused = await createTestLatchkey({ kind: 'sqlite', settings: { SOCIALACCOUNT_PROVIDERS: { saml: { APPS: [app] } } } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isLatchkeyError(refused, 'configuration_invalid') && refused.message).toBe(
      `SOCIALACCOUNT_PROVIDERS.saml: the app "${IDP.entity_id}" has unusable settings: idp needs a metadata_url, or an sso_url and its x509cert.`,
    );
    // The rule that needs the app's secret is asked at start-up too.
    const keyless = { ...app, settings: { idp: IDP, advanced: { x509cert: keys.certificate } } };
    const refusedKeyless = await createTestLatchkey({ kind: 'sqlite', settings: { SOCIALACCOUNT_PROVIDERS: { saml: { APPS: [keyless] } } } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isLatchkeyError(refusedKeyless, 'configuration_invalid') && refusedKeyless.message).toContain("advanced.x509cert needs the service provider's private key");
  });
});

describe('a SAML app entry (apps.ts)', () => {
  const entry = { provider_id: 'https://idp.example/metadata?tenant=acme', name: 'Acme', client_id: 'acme', settings: { idp: IDP } };

  it('takes an entity id that is a URL as provider_id, the app then named by it', () => {
    const checked = checkAppEntry('saml', entry);
    expect('app' in checked && checked.app).toMatchObject({ provider: 'saml', providerId: entry.provider_id, id: entry.provider_id, clientId: 'acme' });
    expect('app' in checkAppEntry('saml', { ...entry, provider_id: 'urn:oid:1.2.3' })).toBe(true);
  });

  it('refuses two apps under one organisation slug, whose URLs would be ambiguous', () => {
    const other = { ...entry, provider_id: 'https://other-idp.example/metadata' };
    expect(() => appsFromSettings({ saml: { APPS: [entry, other] } })).toThrow(/organisation slug \(client_id\) "acme"/);
    expect(appsFromSettings({ saml: { APPS: [entry, { ...other, client_id: 'other' }] } })).toHaveLength(2);
  });

  it('refuses a provider_id with spaces or none, and a client_id that is no URL slug', () => {
    expect(checkAppEntry('saml', { ...entry, provider_id: undefined })).toEqual({ field: undefined, problem: 'a provider_id is required for saml (it names the app in its URLs)' });
    expect(checkAppEntry('saml', { ...entry, provider_id: 'https://idp.example/ metadata' })).toMatchObject({ field: 'provider_id' });
    for (const clientId of ['acme/other', '../acme', 'acme corp', '-acme', 'acme%2F']) {
      expect(checkAppEntry('saml', { ...entry, client_id: clientId }), clientId).toEqual({
        field: 'client_id',
        problem: 'the organisation slug in the app\'s URLs: letters, digits, "-", "_" and ".", starting with a letter or digit',
      });
    }
  });
});
