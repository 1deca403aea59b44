/**
 * The hostile variants are real attacks (the honest signature is still in them and, where the IDs
 * stay unique, still verifies by itself), and node-saml, used directly as a service provider, never
 * signs anyone in as the attacker's choice from them. Date is frozen at NOW, as node-saml reads the
 * wall clock.
 */
import { SAML, type SamlConfig } from '@node-saml/node-saml';
import { SignedXml } from 'xml-crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  unsigned,
  withAssertionWrappingSignedAssertion,
  withCommentInNameId,
  withExtraUnsignedAssertion,
  withSignatureOnEvilAssertion,
  withSignedAssertionMoved,
  withSignedResponseWrapped,
  XSW_ATTACKS,
} from './saml-attacks.js';
import { startTestSamlIdp, type SamlResponseOptions, type TestSamlIdp } from './saml-idp.js';
import { childElement, descendants, parseXml, SAML_NS, serializeXml } from './saml-xml.js';

const NOW = new Date('2031-03-14T09:26:53.000Z');
const SP_ENTITY_ID = 'https://sp.example.test/saml/metadata';
const ACS_URL = 'https://sp.example.test/saml/acs';
const ALICE = 'alice@example.com';
const MALLORY = 'mallory@evil.test';

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
});
afterEach(() => {
  vi.useRealTimers();
});

function honestResponse(overrides: Partial<SamlResponseOptions> = {}): string {
  return idp.responseXml({ acsUrl: ACS_URL, audience: SP_ENTITY_ID, person: { nameId: ALICE }, now: NOW, ...overrides });
}

/** node-saml requiring the signature where the honest identity provider put it. */
function serviceProvider(signed: 'assertion' | 'response', overrides: Partial<SamlConfig> = {}): SAML {
  return new SAML({
    idpCert: idp.keys.certificate,
    issuer: SP_ENTITY_ID,
    audience: SP_ENTITY_ID,
    callbackUrl: ACS_URL,
    wantAssertionsSigned: signed === 'assertion',
    wantAuthnResponseSigned: signed === 'response',
    ...overrides,
  });
}

/** The NameID node-saml signs someone in as, or the reason it refused. */
async function outcome(sp: SAML, xml: string): Promise<string> {
  try {
    const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: Buffer.from(xml, 'utf8').toString('base64') });
    return `signed in as ${profile?.nameID ?? '(nobody)'}`;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

function signatureValues(xml: string): string[] {
  return descendants(parseXml(xml), SAML_NS.dsig, 'SignatureValue').map((value) => value.textContent ?? '');
}

/** xml-crypto on its own, as a careless service provider would use it: does the one signature in the document verify? */
function naiveSignatureCheck(xml: string): boolean {
  const [signature] = descendants(parseXml(xml), SAML_NS.dsig, 'Signature');
  const verifier = new SignedXml({ publicCert: idp.keys.certificate });
  verifier.loadSignature(serializeXml(signature!));
  return verifier.checkSignature(xml);
}

describe('XML signature wrapping', () => {
  it.each(XSW_ATTACKS.map((attack) => [attack.name, attack] as const))('%s: a live attack that node-saml refuses', async (_name, attack) => {
    const honest = honestResponse({ sign: attack.needs });
    expect(await outcome(serviceProvider(attack.needs), honest)).toBe(`signed in as ${ALICE}`);
    const hostile = attack.apply(honest, MALLORY);

    const names = descendants(parseXml(hostile), SAML_NS.assertion, 'NameID').map((nameId) => nameId.textContent);
    expect(names.sort()).toEqual([ALICE, MALLORY]);
    expect(signatureValues(hostile)).toEqual(signatureValues(honest));
    const signedId = descendants(parseXml(honest), SAML_NS.dsig, 'Reference')[0]!.getAttribute('URI')!.slice(1);
    const carriers = hostile.split(`ID="${signedId}"`).length - 1;
    // With one element carrying the signed ID the signature still verifies on its own; with two,
    // xml-crypto refuses to choose, and the attack bets on a service provider that looks up by ID itself.
    if (carriers === 1) expect(naiveSignatureCheck(hostile)).toBe(true);
    else expect(carriers).toBe(2);

    const result = await outcome(serviceProvider(attack.needs), hostile);
    expect(result === `signed in as ${ALICE}` || result.startsWith('refused: ')).toBe(true);
    expect(result).not.toContain(MALLORY);
  });

  it('puts the evil assertion where a careless reader looks first (XSW3, XSW4, XSW5) or where the signed ID was (XSW7, XSW8)', () => {
    const honest = honestResponse();
    const firstName = (xml: string): string | null => descendants(parseXml(xml), SAML_NS.assertion, 'NameID')[0]!.textContent;
    expect(firstName(withExtraUnsignedAssertion(honest, { nameId: MALLORY }))).toBe(MALLORY);
    expect(firstName(withAssertionWrappingSignedAssertion(honest, MALLORY))).toBe(MALLORY);
    expect(firstName(withSignatureOnEvilAssertion(honest, MALLORY))).toBe(MALLORY);
    for (const wrapper of ['extensions', 'object'] as const) {
      const response = parseXml(withSignedAssertionMoved(honest, MALLORY, wrapper)).documentElement!;
      const inPlace = childElement(response, SAML_NS.assertion, 'Assertion')!;
      const subject = childElement(inPlace, SAML_NS.assertion, 'Subject')!;
      expect(childElement(subject, SAML_NS.assertion, 'NameID')!.textContent).toBe(MALLORY);
      expect(inPlace.getAttribute('ID')).toBe(parseXml(honest).documentElement!.getElementsByTagNameNS(SAML_NS.assertion, 'Assertion')[0]!.getAttribute('ID'));
    }
  });

  it('gives the extra assertion the evil person’s attributes too', () => {
    const hostile = withExtraUnsignedAssertion(honestResponse({ person: { nameId: ALICE, attributes: { role: 'user' } } }), {
      nameId: MALLORY,
      attributes: { role: ['admin', 'staff'] },
    });
    const [evil] = descendants(parseXml(hostile), SAML_NS.assertion, 'Assertion');
    expect(descendants(evil!, SAML_NS.assertion, 'AttributeValue').map((value) => value.textContent)).toEqual(['admin', 'staff']);
    expect(childElement(evil!, SAML_NS.dsig, 'Signature')).toBeUndefined();
  });

  it('wraps a response signed at both levels too, and node-saml still refuses', async () => {
    const honest = honestResponse({ sign: 'both' });
    const sp = serviceProvider('response', { wantAssertionsSigned: true });
    for (const placement of ['object', 'sibling'] as const) {
      expect(await outcome(sp, withSignedResponseWrapped(honest, MALLORY, placement))).toMatch(/^refused: /);
    }
  });

  it('refuses to attack what is not signed where the variant needs it', () => {
    expect(() => withSignedResponseWrapped(honestResponse({ sign: 'assertion' }), MALLORY)).toThrow(/not signed/);
    expect(() => withSignedAssertionMoved(honestResponse({ sign: 'response' }), MALLORY)).toThrow(/not signed/);
  });
});

describe('comment in the NameID', () => {
  it('keeps the signature valid, and node-saml reads the whole NameID, never the part before the comment', async () => {
    const honest = honestResponse({ person: { nameId: 'alice@example.com.evil.test' } });
    const hostile = withCommentInNameId(honest, 'alice@example.com'.length);
    expect(hostile).toContain('alice@example.com<!---->.evil.test');
    // The trap a service provider must avoid: the first text node alone is the victim's address.
    const nameId = descendants(parseXml(hostile), SAML_NS.assertion, 'NameID')[0]!;
    expect(nameId.firstChild?.nodeValue).toBe('alice@example.com');
    expect(naiveSignatureCheck(hostile)).toBe(true);
    expect(await outcome(serviceProvider('assertion'), hostile)).toBe('signed in as alice@example.com.evil.test');
  });

  it('splits only inside the text', () => {
    expect(() => withCommentInNameId(honestResponse(), 0)).toThrow();
    expect(() => withCommentInNameId(honestResponse(), ALICE.length)).toThrow();
  });
});

describe('unsigned', () => {
  it('strips every signature, and node-saml refuses what is left', async () => {
    const stripped = unsigned(honestResponse({ sign: 'both' }));
    expect(descendants(parseXml(stripped), SAML_NS.dsig, 'Signature')).toHaveLength(0);
    expect(descendants(parseXml(stripped), SAML_NS.assertion, 'NameID')[0]!.textContent).toBe(ALICE);
    expect(await outcome(serviceProvider('assertion'), stripped)).toMatch(/^refused: Invalid signature/);
    expect(await outcome(serviceProvider('response'), stripped)).toMatch(/^refused: Invalid document signature/);
  });
});
