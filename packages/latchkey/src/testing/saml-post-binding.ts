/**
 * The HTTP-POST binding's AuthnRequest signature: an enveloped XML signature inside the request
 * itself, rather than the Redirect binding's signature over the query string.
 */
import { SignedXml } from 'xml-crypto';
import { childElement, parseXml, SAML_NS, serializeXml } from './saml-xml.js';

/**
 * Undefined when the request carries no signature; true when it does but there is no certificate to
 * check it with (the identity provider was given none); otherwise whether it verifies. A signature
 * counts only if it is a child of the request and its single reference is the request itself, so a
 * valid signature over some other element cannot vouch for the request.
 */
export function verifyPostSignature(xml: string, certificate: string | undefined): boolean | undefined {
  const root = parseXml(xml).documentElement;
  const signature = root ? childElement(root, SAML_NS.dsig, 'Signature') : undefined;
  if (!root || signature === undefined) return undefined;
  if (certificate === undefined) return true;
  const verifier = new SignedXml({ publicCert: certificate });
  try {
    verifier.loadSignature(serializeXml(signature));
    const references = verifier.getReferences();
    if (references.length !== 1 || references[0]?.uri !== `#${root.getAttribute('ID') ?? ''}`) return false;
    return verifier.checkSignature(xml);
  } catch {
    return false;
  }
}
