/**
 * XML Encryption of an assertion for the service provider's certificate: AES-256-GCM for the
 * content, its key wrapped with RSA-OAEP (MGF1 with SHA-1, the only one rsa-oaep-mgf1p allows).
 *
 * Why not xml-encryption's encrypt(): it is asynchronous (it draws its key and IV through callback
 * randomBytes), while the identity provider's responseXml() is synchronous, as tests want to build
 * a response in one expression. The format written here is the standard one, and the tests prove
 * it by decrypting with @node-saml/node-saml, which uses xml-encryption to decrypt.
 */
import { constants, createCipheriv, createPublicKey, publicEncrypt, randomBytes } from 'node:crypto';
import { certificateBody } from './saml-keys.js';
import { SAML_NS } from './saml-xml.js';

const AES256_GCM = 'http://www.w3.org/2009/xmlenc11#aes256-gcm';
const RSA_OAEP_MGF1P = 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p';
const SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1';
const ELEMENT_TYPE = 'http://www.w3.org/2001/04/xmlenc#Element';

/** Wraps a complete Assertion element (its namespaces declared on itself) in a saml:EncryptedAssertion. */
export function encryptAssertion(assertionXml: string, recipientCertificate: string): string {
  const contentKey = randomBytes(32);
  // XML Encryption 1.1, section 5.2.4: the cipher text is the 96-bit IV, then the ciphertext, then the 128-bit tag.
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', contentKey, iv);
  const encrypted = Buffer.concat([iv, cipher.update(assertionXml, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const wrappedKey = publicEncrypt(
    { key: createPublicKey(recipientCertificate), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
    contentKey,
  );
  return [
    `<saml:EncryptedAssertion xmlns:saml="${SAML_NS.assertion}">`,
    `<xenc:EncryptedData xmlns:xenc="${SAML_NS.xenc}" Type="${ELEMENT_TYPE}">`,
    `<xenc:EncryptionMethod Algorithm="${AES256_GCM}"/>`,
    `<ds:KeyInfo xmlns:ds="${SAML_NS.dsig}">`,
    '<xenc:EncryptedKey>',
    `<xenc:EncryptionMethod Algorithm="${RSA_OAEP_MGF1P}"><ds:DigestMethod Algorithm="${SHA1}"/></xenc:EncryptionMethod>`,
    `<ds:KeyInfo><ds:X509Data><ds:X509Certificate>${certificateBody(recipientCertificate)}</ds:X509Certificate></ds:X509Data></ds:KeyInfo>`,
    `<xenc:CipherData><xenc:CipherValue>${wrappedKey.toString('base64')}</xenc:CipherValue></xenc:CipherData>`,
    '</xenc:EncryptedKey>',
    '</ds:KeyInfo>',
    `<xenc:CipherData><xenc:CipherValue>${encrypted.toString('base64')}</xenc:CipherValue></xenc:CipherData>`,
    '</xenc:EncryptedData>',
    '</saml:EncryptedAssertion>',
  ].join('');
}
