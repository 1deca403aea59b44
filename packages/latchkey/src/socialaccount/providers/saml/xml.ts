/**
 * Reading the SAML documents Latchkey checks itself (metadata, and what node-saml has already
 * verified): parsed by @xmldom/xmldom, which resolves no external entity and fetches nothing, then
 * walked by namespace and local name, never by prefix, since an IdP picks its prefixes freely.
 */
import { DOMParser, type Document, type Element } from '@xmldom/xmldom';

export const SAML_PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';
export const SAML_ASSERTION = 'urn:oasis:names:tc:SAML:2.0:assertion';
export const SAML_METADATA = 'urn:oasis:names:tc:SAML:2.0:metadata';
export const XML_DSIG = 'http://www.w3.org/2000/09/xmldsig#';
export const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';

/** The most a SAML document may weigh: a response with a few certificates is tens of kilobytes. */
export const MAX_DOCUMENT_BYTES = 512 * 1024;

/** The parsed document, or undefined for text that is not well-formed XML (or holds a DOCTYPE). */
export function parseXml(text: string): Document | undefined {
  // A DOCTYPE has no place in SAML and is where entity-expansion attacks live: refused outright.
  if (text.length > MAX_DOCUMENT_BYTES || /<!DOCTYPE/i.test(text)) return undefined;
  try {
    const document = new DOMParser({ onError: (level, message) => { if (level !== 'warning') throw new Error(message); } }).parseFromString(text, 'text/xml');
    return document.documentElement ? document : undefined;
  } catch {
    return undefined;
  }
}

/** The element children of `parent` in `namespace` named `localName`, in document order. */
export function children(parent: Element, namespace: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node !== null; node = node.nextSibling) {
    if (node.nodeType === node.ELEMENT_NODE) {
      const element = node as Element;
      if (element.namespaceURI === namespace && element.localName === localName) found.push(element);
    }
  }
  return found;
}

/** The one child of that name, or undefined (none, or several: which one counts would be a guess). */
export function onlyChild(parent: Element, namespace: string, localName: string): Element | undefined {
  const found = children(parent, namespace, localName);
  return found.length === 1 ? found[0] : undefined;
}

/** Every descendant of that name, in document order. */
export function descendants(parent: Element | Document, namespace: string, localName: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(namespace, localName));
}

/**
 * The element's whole text, every text node joined: a comment inside a NameID
 * (`alice@example.com<!---->.evil.test`) must not cut the value short, since the signature, computed
 * without comments, covers the whole of it.
 */
export function textOf(element: Element): string {
  let text = '';
  for (let node = element.firstChild; node !== null; node = node.nextSibling) {
    if (node.nodeType === node.TEXT_NODE || node.nodeType === node.CDATA_SECTION_NODE) text += node.nodeValue ?? '';
  }
  return text.trim();
}

/** An attribute's value, undefined when absent. */
export function attributeOf(element: Element, name: string): string | undefined {
  return element.hasAttribute(name) ? element.getAttribute(name) ?? undefined : undefined;
}

/** A NameID as the service provider keeps it: its text and, when present, the attributes that say which namespace it belongs to. */
export interface ReadNameId {
  nameId: string;
  format?: string;
  nameQualifier?: string;
  spNameQualifier?: string;
}

/** A NameID element read: in an assertion and in a LogoutRequest alike, so that the two compare. */
export function readNameId(element: Element): ReadNameId {
  const read: ReadNameId = { nameId: textOf(element) };
  const format = attributeOf(element, 'Format');
  const nameQualifier = attributeOf(element, 'NameQualifier');
  const spNameQualifier = attributeOf(element, 'SPNameQualifier');
  if (format !== undefined) read.format = format;
  if (nameQualifier !== undefined) read.nameQualifier = nameQualifier;
  if (spNameQualifier !== undefined) read.spNameQualifier = spNameQualifier;
  return read;
}
