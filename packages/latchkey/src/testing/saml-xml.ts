/**
 * The XML groundwork of the test SAML identity provider: namespaces and algorithm identifiers,
 * escaping for the templates, a strict parser, and the enveloped XML signature SAML uses.
 */
import { randomBytes } from 'node:crypto';
import { DOMParser, XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import type { TestKeyPair } from './saml-keys.js';

export const SAML_NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
  xenc: 'http://www.w3.org/2001/04/xmlenc#',
} as const;

export const SAML_BINDING = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
} as const;

export const NAMEID_FORMAT = {
  emailAddress: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
} as const;

export type SignatureAlgorithmName = 'sha256' | 'sha1';

const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';

/** The XML-DSig identifiers of each choice: the same hash for the signature and for the digest. */
export const SIGNATURE_ALGORITHMS: Record<SignatureAlgorithmName, { signature: string; digest: string; nodeHash: string }> = {
  sha256: {
    signature: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    digest: 'http://www.w3.org/2001/04/xmlenc#sha256',
    nodeHash: 'sha256',
  },
  sha1: {
    signature: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
    digest: 'http://www.w3.org/2000/09/xmldsig#sha1',
    nodeHash: 'sha1',
  },
};

/** The Redirect binding names the signature algorithm by URI (SigAlg); these are the ones we verify. */
export function nodeHashForSigAlg(sigAlg: string): string | undefined {
  const known: Record<string, string> = {
    'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': 'sha256',
    'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': 'sha512',
    'http://www.w3.org/2000/09/xmldsig#rsa-sha1': 'sha1',
  };
  return known[sigAlg];
}

/**
 * Escapes text and attribute values alike: with quotes escaped too, one helper is safe in both
 * places, and a person's name or an attribute value can never close an element or an attribute.
 */
export function escapeXml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** SAML IDs are xs:ID: an NCName, which must not start with a digit, hence the leading underscore. */
export function randomSamlId(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

/** xs:dateTime in UTC, as SAML requires. */
export function samlInstant(date: Date): string {
  return date.toISOString();
}

/**
 * Parses XML and refuses anything malformed: a lenient parse would let a broken document through
 * as some other document than the one its author meant.
 */
export function parseXml(xml: string): Document {
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(`Malformed XML: ${message}`);
    },
  });
  return parser.parseFromString(xml, 'text/xml');
}

/** The XML text of a document or of one node in it. */
export function serializeXml(node: Node): string {
  return new XMLSerializer().serializeToString(node);
}

/** The first child element of `parent` with this namespace and local name. */
export function childElement(parent: Element, namespace: string, localName: string): Element | undefined {
  for (let node = parent.firstChild; node !== null; node = node.nextSibling) {
    if (node.nodeType === node.ELEMENT_NODE) {
      const element = node as Element;
      if (element.namespaceURI === namespace && element.localName === localName) return element;
    }
  }
  return undefined;
}

/** Every descendant element of `root` with this namespace and local name, in document order. */
export function descendants(root: Document | Element, namespace: string, localName: string): Element[] {
  return Array.from(root.getElementsByTagNameNS(namespace, localName));
}

/**
 * The IDs we reference from a signature go into an XPath expression; a quote in one would let it
 * pick another element, so only NCName characters are allowed.
 */
function assertPlainId(id: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(id)) throw new Error(`Not a usable SAML ID: ${id}`);
}

/**
 * Signs the element with this ID by an enveloped signature placed right after its Issuer, as the
 * SAML schema orders a Response's and an Assertion's children. Exclusive canonicalisation without
 * comments is what SAML profiles use, and it is also why a comment added later does not break it.
 */
export function signEnveloped(
  xml: string,
  options: { elementLocalName: 'Response' | 'Assertion' | 'LogoutRequest'; id: string; key: TestKeyPair; algorithm: SignatureAlgorithmName },
): string {
  assertPlainId(options.id);
  const algorithm = SIGNATURE_ALGORITHMS[options.algorithm];
  const signature = new SignedXml({
    privateKey: options.key.privateKey,
    publicCert: options.key.certificate,
    signatureAlgorithm: algorithm.signature,
    canonicalizationAlgorithm: EXC_C14N,
  });
  signature.addReference({
    xpath: `//*[local-name(.)='${options.elementLocalName}' and @ID='${options.id}']`,
    transforms: [ENVELOPED, EXC_C14N],
    digestAlgorithm: algorithm.digest,
  });
  signature.computeSignature(xml, {
    prefix: 'ds',
    location: {
      reference: `//*[local-name(.)='${options.elementLocalName}' and @ID='${options.id}']/*[local-name(.)='Issuer']`,
      action: 'after',
    },
  });
  return signature.getSignedXml();
}
