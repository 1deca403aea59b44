/**
 * Key pairs and self-signed X.509 certificates for the test SAML identity provider and for the
 * service providers tested against it. They are made fresh in memory for each run, so no key is
 * ever committed, and no test shares a key with another project's fixtures.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface TestKeyPair {
  /** PKCS#8 PEM ("BEGIN PRIVATE KEY"), which node:crypto and xml-crypto read as they are. */
  privateKey: string;
  /** A self-signed X.509 certificate over the key pair's public key, PEM. */
  certificate: string;
}

/*
 * SAML verifiers read only the public key from a certificate, but a certificate that expired, or is
 * not yet valid, could be refused by a stricter one; a validity from long before any test's clock to
 * long after it keeps the tests independent of the wall clock.
 */
const VALID_FROM = new Date(Date.UTC(2000, 0, 1));
const VALID_UNTIL = new Date(Date.UTC(2099, 11, 31, 23, 59, 59));

export function createTestKeyPair(commonName: string): TestKeyPair {
  // node:crypto makes the RSA key in native code, which is much faster than node-forge's JavaScript.
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(pair.publicKey);
  certificate.serialNumber = positiveSerialNumber();
  certificate.validity.notBefore = VALID_FROM;
  certificate.validity.notAfter = VALID_UNTIL;
  const name = [{ name: 'commonName', value: commonName }];
  certificate.setSubject(name);
  certificate.setIssuer(name);
  certificate.sign(forge.pki.privateKeyFromPem(pair.privateKey), forge.md.sha256.create());
  return { privateKey: pair.privateKey, certificate: forge.pki.certificateToPem(certificate) };
}

/** DER encodes the serial number as a signed integer: a clear top bit keeps it positive, as RFC 5280 requires. */
function positiveSerialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

/** The certificate's base64 body alone, as metadata and ds:X509Certificate carry it. */
export function certificateBody(pem: string): string {
  return pem
    .replace(/-----BEGIN CERTIFICATE-----/g, '')
    .replace(/-----END CERTIFICATE-----/g, '')
    .replace(/\s+/g, '');
}

/** The PEM form of a certificate body found in metadata (whitespace inside it is dropped). */
export function certificatePem(body: string): string {
  const compact = body.replace(/\s+/g, '');
  const lines = compact.match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
