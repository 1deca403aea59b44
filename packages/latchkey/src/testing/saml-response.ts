/**
 * Builds the SAML Response a test identity provider sends to a service provider's ACS URL:
 * samlp:Response, then a saml:Assertion with Subject (NameID and a bearer SubjectConfirmation),
 * Conditions (time window and audience), AuthnStatement and AttributeStatement; signed where asked,
 * and the assertion encrypted for the service provider where asked. Every field a test may want to
 * get wrong on purpose is an option.
 */
import type { TestKeyPair } from './saml-keys.js';
import { encryptAssertion } from './saml-encrypt.js';
import { escapeXml, NAMEID_FORMAT, randomSamlId, SAML_NS, samlInstant, signEnveloped, type SignatureAlgorithmName } from './saml-xml.js';

export interface SamlPerson {
  nameId: string;
  /** Defaults to emailAddress when the NameID holds an @, else unspecified. */
  nameIdFormat?: string;
  /** AuthnStatement@SessionIndex; a random one when absent. */
  sessionIndex?: string;
  /** Attribute name (often a URN such as urn:oid:0.9.2342.19200300.100.1.3) to one value or several. */
  attributes?: Record<string, string | string[]>;
}

export interface SamlResponseOptions {
  /** Response@Destination and SubjectConfirmationData@Recipient, unless those are given. */
  acsUrl: string;
  /** Conditions/AudienceRestriction/Audience. */
  audience: string;
  person: SamlPerson;
  /** IssueInstant and AuthnInstant; the time window defaults to five minutes either side. */
  now: Date;
  /** Absent: an unsolicited (IdP-initiated) response, with no InResponseTo anywhere. */
  inResponseTo?: string;
  /** Overrides Response@Destination; null leaves the attribute out. */
  destination?: string | null;
  recipient?: string;
  /** The Response's and the Assertion's Issuer; the identity provider's entity ID by default. */
  issuer?: string;
  notBefore?: Date;
  notOnOrAfter?: Date;
  subjectNotOnOrAfter?: Date;
  assertionId?: string;
  responseId?: string;
  /** Which elements carry an enveloped signature; 'assertion' by default. */
  sign?: 'assertion' | 'response' | 'both' | 'none';
  /** The identity provider's own key pair by default. */
  signingKey?: TestKeyPair;
  /** For the signature and the digest alike; sha256 by default. */
  algorithm?: SignatureAlgorithmName;
  /** The service provider's certificate (PEM): the assertion, signed first if asked, goes into an EncryptedAssertion. */
  encryptFor?: string;
  /**
   * The Response's top-level StatusCode, with the second-level one an IdP adds to say why:
   * 'authn_failed' is Responder/AuthnFailed, 'responder' Responder alone, 'requester'
   * Requester/RequestDenied. Only a success carries an assertion, unless `assertionDespiteStatus`.
   */
  status?: SamlStatus;
  /** An assertion, signed as `sign` says, in a response whose status is not Success: what an honest IdP never sends. */
  assertionDespiteStatus?: boolean;
}

export type SamlStatus = 'success' | 'authn_failed' | 'responder' | 'requester';

export interface ResponseDefaults {
  issuer: string;
  signingKey: TestKeyPair;
}

const FIVE_MINUTES_MS = 5 * 60 * 1000;
const STATUS_SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const STATUS_RESPONDER = 'urn:oasis:names:tc:SAML:2.0:status:Responder';
const STATUS_REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';
const STATUS_AUTHN_FAILED = 'urn:oasis:names:tc:SAML:2.0:status:AuthnFailed';
const STATUS_REQUEST_DENIED = 'urn:oasis:names:tc:SAML:2.0:status:RequestDenied';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const PASSWORD_PROTECTED_TRANSPORT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';
const ATTRNAME_URI = 'urn:oasis:names:tc:SAML:2.0:attrname-format:uri';
const ATTRNAME_BASIC = 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic';

/** `name="value"` with the value escaped, or nothing when the value is absent. */
function attribute(name: string, value: string | undefined): string {
  return value === undefined ? '' : ` ${name}="${escapeXml(value)}"`;
}

function defaultNameIdFormat(nameId: string): string {
  return nameId.includes('@') ? NAMEID_FORMAT.emailAddress : NAMEID_FORMAT.unspecified;
}

function attributeStatementXml(attributes: Record<string, string | string[]> | undefined): string {
  const entries = Object.entries(attributes ?? {});
  if (entries.length === 0) return '';
  const rendered = entries.map(([name, value]) => {
    const values = (Array.isArray(value) ? value : [value])
      .map((one) => `<saml:AttributeValue>${escapeXml(one)}</saml:AttributeValue>`)
      .join('');
    // A URN or URL names an attribute in the uri format; a bare word is a basic name.
    const nameFormat = name.includes(':') ? ATTRNAME_URI : ATTRNAME_BASIC;
    return `<saml:Attribute${attribute('Name', name)}${attribute('NameFormat', nameFormat)}>${values}</saml:Attribute>`;
  });
  return `<saml:AttributeStatement>${rendered.join('')}</saml:AttributeStatement>`;
}

/**
 * The Assertion declares its own namespace so that it stands alone: it is signed on its own, and
 * once encrypted it is decrypted on its own, away from the Response's declarations.
 */
export function assertionXml(options: SamlResponseOptions, issuer: string, assertionId: string): string {
  const { now, person } = options;
  const notBefore = options.notBefore ?? new Date(now.getTime() - FIVE_MINUTES_MS);
  const notOnOrAfter = options.notOnOrAfter ?? new Date(now.getTime() + FIVE_MINUTES_MS);
  const subjectNotOnOrAfter = options.subjectNotOnOrAfter ?? new Date(now.getTime() + FIVE_MINUTES_MS);
  return [
    `<saml:Assertion xmlns:saml="${SAML_NS.assertion}"${attribute('ID', assertionId)} Version="2.0"${attribute('IssueInstant', samlInstant(now))}>`,
    `<saml:Issuer>${escapeXml(issuer)}</saml:Issuer>`,
    '<saml:Subject>',
    `<saml:NameID${attribute('Format', person.nameIdFormat ?? defaultNameIdFormat(person.nameId))}>${escapeXml(person.nameId)}</saml:NameID>`,
    `<saml:SubjectConfirmation Method="${BEARER}">`,
    `<saml:SubjectConfirmationData${attribute('InResponseTo', options.inResponseTo)}${attribute('NotOnOrAfter', samlInstant(subjectNotOnOrAfter))}${attribute('Recipient', options.recipient ?? options.acsUrl)}/>`,
    '</saml:SubjectConfirmation>',
    '</saml:Subject>',
    `<saml:Conditions${attribute('NotBefore', samlInstant(notBefore))}${attribute('NotOnOrAfter', samlInstant(notOnOrAfter))}>`,
    `<saml:AudienceRestriction><saml:Audience>${escapeXml(options.audience)}</saml:Audience></saml:AudienceRestriction>`,
    '</saml:Conditions>',
    `<saml:AuthnStatement${attribute('AuthnInstant', samlInstant(now))}${attribute('SessionIndex', person.sessionIndex ?? randomSamlId())}>`,
    `<saml:AuthnContext><saml:AuthnContextClassRef>${PASSWORD_PROTECTED_TRANSPORT}</saml:AuthnContextClassRef></saml:AuthnContext>`,
    '</saml:AuthnStatement>',
    attributeStatementXml(person.attributes),
    '</saml:Assertion>',
  ].join('');
}

/** Each status as its top-level StatusCode and the second-level one inside it, if any. */
const STATUS_CODES: Readonly<Record<SamlStatus, readonly [string, string?]>> = {
  success: [STATUS_SUCCESS],
  authn_failed: [STATUS_RESPONDER, STATUS_AUTHN_FAILED],
  responder: [STATUS_RESPONDER],
  requester: [STATUS_REQUESTER, STATUS_REQUEST_DENIED],
};

function statusXml(status: SamlStatus): string {
  const [topLevel, secondLevel] = STATUS_CODES[status];
  if (status === 'success') return `<samlp:Status><samlp:StatusCode Value="${topLevel}"/></samlp:Status>`;
  const inner = secondLevel === undefined ? '' : `<samlp:StatusCode Value="${secondLevel}"/>`;
  return ['<samlp:Status>', `<samlp:StatusCode Value="${topLevel}">${inner}</samlp:StatusCode>`, '<samlp:StatusMessage>Authentication failed</samlp:StatusMessage>', '</samlp:Status>'].join('');
}

/**
 * The Response XML. Order matters: the assertion is signed first (so an encrypted assertion carries
 * its signature inside), then encrypted, and the Response is signed last, over whatever it holds.
 * A failed authentication carries no assertion, as an identity provider sends it (unless the test
 * asks for one: assertionDespiteStatus).
 */
export function buildSamlResponse(options: SamlResponseOptions, defaults: ResponseDefaults): string {
  const issuer = options.issuer ?? defaults.issuer;
  const sign = options.sign ?? 'assertion';
  const key = options.signingKey ?? defaults.signingKey;
  const algorithm = options.algorithm ?? 'sha256';
  const responseId = options.responseId ?? randomSamlId();
  const status = options.status ?? 'success';

  let assertion = '';
  if (status === 'success' || options.assertionDespiteStatus === true) {
    const assertionId = options.assertionId ?? randomSamlId();
    assertion = assertionXml(options, issuer, assertionId);
    if (sign === 'assertion' || sign === 'both') {
      assertion = signEnveloped(assertion, { elementLocalName: 'Assertion', id: assertionId, key, algorithm });
    }
    if (options.encryptFor !== undefined) assertion = encryptAssertion(assertion, options.encryptFor);
  }

  const destination = options.destination === undefined ? options.acsUrl : options.destination;
  const response = [
    `<samlp:Response xmlns:samlp="${SAML_NS.protocol}" xmlns:saml="${SAML_NS.assertion}"`,
    `${attribute('ID', responseId)} Version="2.0"${attribute('IssueInstant', samlInstant(options.now))}`,
    `${attribute('Destination', destination ?? undefined)}${attribute('InResponseTo', options.inResponseTo)}>`,
    `<saml:Issuer>${escapeXml(issuer)}</saml:Issuer>`,
    statusXml(status),
    assertion,
    '</samlp:Response>',
  ].join('');
  if (sign === 'response' || sign === 'both') {
    return signEnveloped(response, { elementLocalName: 'Response', id: responseId, key, algorithm });
  }
  return response;
}
