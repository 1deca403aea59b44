/**
 * A SAML app's `settings`, named as allauth's saml provider names them (`idp`, `sp`,
 * `attribute_mapping`, `use_nameid_for_email`, `advanced`): what each key may hold, checked by
 * app-settings.ts wherever an app arrives, and the options the service provider uses, defaults
 * applied. Unlike the OAuth 2.0 kinds' flat settings these are nested objects, so each is read by a
 * reader of its own that names the inner key it refuses (`idp.entity_id`, `advanced.private_key`).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { aBoolean, anEndpoint, checkSettings, oneOf, unusableSettings, type SettingProblem, type SettingReader, type SettingsSpec } from '../app-settings.js';

/** The person's fields an IdP's attributes are mapped to. */
export const MAPPED_FIELDS = ['uid', 'email', 'email_verified', 'first_name', 'last_name', 'username'] as const;
export type MappedField = (typeof MAPPED_FIELDS)[number];

/** allauth's defaults: the names standard SAML attribute profiles and the common IdPs use. */
export const DEFAULT_ATTRIBUTE_MAPPING: Readonly<Record<MappedField, readonly string[]>> = {
  uid: ['urn:oasis:names:tc:SAML:attribute:subject-id'],
  email: ['urn:oid:0.9.2342.19200300.100.1.3', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'],
  email_verified: ['http://schemas.auth0.com/email_verified'],
  first_name: ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname', 'urn:oid:2.5.4.42'],
  last_name: ['http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname', 'urn:oid:2.5.4.4'],
  username: ['http://schemas.auth0.com/nickname'],
};

export const SIGNATURE_ALGORITHMS = ['rsa-sha256', 'rsa-sha512', 'rsa-sha1'] as const;
export const DIGEST_ALGORITHMS = ['sha256', 'sha512', 'sha1'] as const;
export type SignatureAlgorithm = (typeof SIGNATURE_ALGORITHMS)[number];
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number];

/** python3-saml's ALLOWED_CLOCK_DRIFT: the seconds two clocks may disagree by. */
const DEFAULT_CLOCK_DRIFT_SECONDS = 300;

export interface SamlIdpOptions {
  entityId: string;
  /** Where the IdP's metadata is read (sso_url, slo_url and certificates then come from it). */
  metadataUrl?: URL;
  metadataRequestTimeoutSeconds: number;
  metadataCacheTimeoutSeconds: number;
  ssoUrl?: URL;
  sloUrl?: URL;
  /** PEM or bare base64; several while the IdP rotates its key. */
  certificates: string[];
}

export interface SamlAdvancedOptions {
  authnRequestSigned: boolean;
  wantAssertionSigned: boolean;
  wantMessageSigned: boolean;
  wantAssertionEncrypted: boolean;
  rejectIdpInitiatedSso: boolean;
  rejectDeprecatedAlgorithm: boolean;
  signatureAlgorithm: SignatureAlgorithm;
  digestAlgorithm: DigestAlgorithm;
  allowedClockDriftSeconds: number;
  nameIdFormat?: string;
  /** The SP's own certificate and key: they sign AuthnRequests, decrypt assertions, and are published in its metadata. */
  certificate?: string;
  privateKey?: string;
}

export interface SamlOptions {
  idp: SamlIdpOptions;
  /** Undefined: the SP metadata's absolute URL, as allauth. */
  spEntityId?: string;
  attributeMapping: Record<MappedField, readonly string[]>;
  useNameIdForEmail: boolean;
  advanced: SamlAdvancedOptions;
}

type Fields = Readonly<Record<string, unknown>>;

/** An object whose keys are read by `readers`; `required` keys must be present. Messages name `key.inner`. */
function anObject(readers: Readonly<Record<string, SettingReader<unknown>>>, required: readonly string[] = []): SettingReader<Fields> {
  return (value, key) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: `${key} must be an object` };
    const fields = value as Fields;
    for (const name of required) {
      if (fields[name] === undefined || fields[name] === '') return { problem: `${key}.${name} is required` };
    }
    for (const [name, reader] of Object.entries(readers)) {
      if (fields[name] === undefined) continue;
      const read = reader(fields[name], `${key}.${name}`);
      if ('problem' in read) return read;
    }
    return { value: fields };
  };
}

const aNonEmptyText: SettingReader<string> = (value, key) =>
  typeof value === 'string' && value.trim() !== '' ? { value: value.trim() } : { problem: `${key} must be a non-empty string` };

/** One string or a list of them (attribute names, certificates). */
const oneOrMoreTexts: SettingReader<string[]> = (value, key) => {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > 0 && list.every((item) => typeof item === 'string' && item.trim() !== '')) return { value: list.map((item: string) => item.trim()) };
  return { problem: `${key} must be a non-empty string or a list of them` };
};

function positiveSeconds(most: number): SettingReader<number> {
  return (value, key) =>
    typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= most ? { value } : { problem: `${key} must be a whole number of seconds from 0 to ${most}` };
}

/** A PEM block of the given label (or a certificate's bare base64): checked for shape here, for meaning when used. */
function aPem(label: 'CERTIFICATE' | 'PRIVATE KEY'): SettingReader<string> {
  return (value, key) => {
    if (typeof value !== 'string') return { problem: `${key} must be a PEM ${label.toLowerCase()}` };
    const text = value.trim();
    const isPem = new RegExp(`^-----BEGIN (RSA )?${label}-----[A-Za-z0-9+/=\\s]+-----END (RSA )?${label}-----$`).test(text);
    const isBareCertificate = label === 'CERTIFICATE' && /^[A-Za-z0-9+/=\s]{64,}$/.test(text);
    return isPem || isBareCertificate ? { value: text } : { problem: `${key} must be a PEM ${label.toLowerCase()} (-----BEGIN ${label}-----)` };
  };
}

const certificates: SettingReader<string[]> = (value, key) => {
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) return { problem: `${key} must be a certificate or a list of them` };
  const read: string[] = [];
  for (const [index, item] of list.entries()) {
    const one = aPem('CERTIFICATE')(item, Array.isArray(value) ? `${key}[${index}]` : key);
    if ('problem' in one) return one;
    read.push(one.value);
  }
  return { value: read };
};

const IDP = anObject(
  {
    entity_id: aNonEmptyText,
    metadata_url: anEndpoint,
    metadata_request_timeout: positiveSeconds(120),
    metadata_cache_timeout: positiveSeconds(7 * 86400),
    sso_url: anEndpoint,
    slo_url: anEndpoint,
    x509cert: certificates,
  },
  ['entity_id'],
);

const ADVANCED = anObject({
  authn_request_signed: aBoolean,
  want_assertion_signed: aBoolean,
  want_message_signed: aBoolean,
  want_assertion_encrypted: aBoolean,
  reject_idp_initiated_sso: aBoolean,
  reject_deprecated_algorithm: aBoolean,
  signature_algorithm: oneOf(SIGNATURE_ALGORITHMS),
  digest_algorithm: oneOf(DIGEST_ALGORITHMS),
  allowed_clock_drift: positiveSeconds(3600),
  name_id_format: aNonEmptyText,
  x509cert: aPem('CERTIFICATE'),
  private_key: aPem('PRIVATE KEY'),
});

const ATTRIBUTE_MAPPING: SettingReader<Fields> = (value, key) => {
  const read = anObject(Object.fromEntries(MAPPED_FIELDS.map((field) => [field, oneOrMoreTexts])))(value, key);
  if ('problem' in read) return read;
  const unknown = Object.keys(read.value).find((name) => !(MAPPED_FIELDS as readonly string[]).includes(name));
  return unknown === undefined ? read : { problem: `${key}.${unknown} is not a field Latchkey maps (${MAPPED_FIELDS.join(', ')})` };
};

export const SAML_SETTINGS: SettingsSpec = {
  required: { idp: "the identity provider: its entity_id, and a metadata_url or an sso_url with its x509cert" },
  readers: {
    idp: IDP,
    sp: anObject({ entity_id: aNonEmptyText }),
    attribute_mapping: ATTRIBUTE_MAPPING,
    use_nameid_for_email: aBoolean,
    advanced: ADVANCED,
  },
};

/**
 * What is wrong with a SAML app's settings, or undefined: the shape (SAML_SETTINGS), then the rules
 * that tie keys together, so that an app is refused when it is stored, not at its first sign-in.
 */
export function checkSamlSettings(settings: Fields): SettingProblem | undefined {
  const problem = checkSettings('saml', settings, SAML_SETTINGS);
  if (problem !== undefined) return problem;
  const idp = settings.idp as Fields;
  const advanced = (settings.advanced ?? {}) as Fields;
  if (idp.metadata_url === undefined && (idp.sso_url === undefined || idp.x509cert === undefined)) {
    return invalid('idp', 'idp needs a metadata_url, or an sso_url and its x509cert');
  }
  for (const needsKeys of ['authn_request_signed', 'want_assertion_encrypted'] as const) {
    if (advanced[needsKeys] === true && advanced.x509cert === undefined) return invalid('advanced', `advanced.${needsKeys} needs the service provider's own certificate (advanced.x509cert) and private key`);
  }
  if (advanced.private_key !== undefined && advanced.x509cert === undefined) return invalid('advanced', 'advanced.private_key needs its certificate, advanced.x509cert');
  const sha1 = advanced.signature_algorithm === 'rsa-sha1' || advanced.digest_algorithm === 'sha1';
  if (sha1 && advanced.reject_deprecated_algorithm !== false) {
    return invalid('advanced', 'SHA-1 is deprecated: advanced.signature_algorithm and digest_algorithm take it only with advanced.reject_deprecated_algorithm false');
  }
  return undefined;
}

/**
 * The rule that needs the app's secret: the SP's certificate goes with its private key, given as
 * advanced.private_key or, better for an app kept in the database, as the app's secret, which the
 * database keeps sealed (settings are stored as they are written).
 */
export function checkSamlApp(app: { settings: Fields; secret: string }): SettingProblem | undefined {
  const advanced = (app.settings.advanced ?? {}) as Fields;
  if (advanced.x509cert === undefined) return undefined;
  const fromSettings = advanced.private_key !== undefined;
  if (!fromSettings && app.secret === '') return invalid('advanced', "advanced.x509cert needs the service provider's private key: the app's secret, or advanced.private_key");
  const where = fromSettings ? 'advanced.private_key' : 'secret';
  const shape = aPem('PRIVATE KEY')(fromSettings ? advanced.private_key : app.secret, where);
  if ('problem' in shape) return invalid(fromSettings ? 'advanced' : 'secret', shape.problem);
  // Read as the signing will read it: a key whose line breaks a form turned into spaces is mended
  // by normalizedPem; one that is still unreadable, or not the certificate's, is refused now.
  try {
    const certificate = new X509Certificate(certificatePem(advanced.x509cert as string));
    if (!certificate.checkPrivateKey(createPrivateKey(normalizedPem(shape.value)))) return invalid(fromSettings ? 'advanced' : 'secret', `${where} is not the private key of advanced.x509cert`);
  } catch {
    return invalid(fromSettings ? 'advanced' : 'secret', `${where} and advanced.x509cert must be a readable private key and its certificate`);
  }
  return undefined;
}

/** A PEM block with its line breaks as PEM has them (a form or an environment variable may have turned them into spaces). */
export function normalizedPem(text: string): string {
  const match = /^-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\s]+)-----END \1-----$/.exec(text.trim());
  if (!match) return text.trim();
  const body = match[2]!.replace(/\s+/g, '');
  return `-----BEGIN ${match[1]}-----\n${(body.match(/.{1,64}/g) ?? []).join('\n')}\n-----END ${match[1]}-----\n`;
}

/** A certificate as PEM, whether it was given as PEM or as the bare base64 of metadata. */
function certificatePem(text: string): string {
  return normalizedPem(text.includes('-----BEGIN') ? text : `-----BEGIN CERTIFICATE-----${text}-----END CERTIFICATE-----`);
}

function invalid(key: string, message: string): SettingProblem {
  return { key, reason: 'invalid', message };
}

/** The options for one app; throws LatchkeyError('configuration_invalid') naming the app for settings checkSamlSettings refuses. */
export function samlOptions(app: { id: string; settings: Fields; secret: string }): SamlOptions {
  const problem = checkSamlSettings(app.settings) ?? checkSamlApp(app);
  if (problem !== undefined) throw unusableSettings(app.id, problem);
  const idp = app.settings.idp as Fields;
  const advanced = (app.settings.advanced ?? {}) as Fields;
  const mapping = (app.settings.attribute_mapping ?? {}) as Fields;
  const textsOf = (value: unknown): string[] | undefined => (value === undefined ? undefined : (Array.isArray(value) ? value : [value]).map((item: string) => item.trim()));
  return {
    idp: {
      entityId: (idp.entity_id as string).trim(),
      metadataUrl: idp.metadata_url === undefined ? undefined : new URL(idp.metadata_url as string),
      metadataRequestTimeoutSeconds: (idp.metadata_request_timeout as number | undefined) ?? 10,
      metadataCacheTimeoutSeconds: (idp.metadata_cache_timeout as number | undefined) ?? 4 * 3600,
      ssoUrl: idp.sso_url === undefined ? undefined : new URL(idp.sso_url as string),
      sloUrl: idp.slo_url === undefined ? undefined : new URL(idp.slo_url as string),
      certificates: textsOf(idp.x509cert) ?? [],
    },
    spEntityId: ((app.settings.sp as Fields | undefined)?.entity_id as string | undefined)?.trim(),
    attributeMapping: Object.fromEntries(MAPPED_FIELDS.map((field) => [field, textsOf(mapping[field]) ?? DEFAULT_ATTRIBUTE_MAPPING[field]])) as Record<MappedField, string[]>,
    useNameIdForEmail: app.settings.use_nameid_for_email === true,
    advanced: {
      authnRequestSigned: advanced.authn_request_signed === true,
      wantAssertionSigned: advanced.want_assertion_signed === true,
      wantMessageSigned: advanced.want_message_signed === true,
      wantAssertionEncrypted: advanced.want_assertion_encrypted === true,
      rejectIdpInitiatedSso: advanced.reject_idp_initiated_sso !== false,
      rejectDeprecatedAlgorithm: advanced.reject_deprecated_algorithm !== false,
      signatureAlgorithm: (advanced.signature_algorithm as SignatureAlgorithm | undefined) ?? 'rsa-sha256',
      digestAlgorithm: (advanced.digest_algorithm as DigestAlgorithm | undefined) ?? 'sha256',
      allowedClockDriftSeconds: (advanced.allowed_clock_drift as number | undefined) ?? DEFAULT_CLOCK_DRIFT_SECONDS,
      nameIdFormat: (advanced.name_id_format as string | undefined)?.trim(),
      certificate: advanced.x509cert === undefined ? undefined : certificatePem(advanced.x509cert as string),
      privateKey: advanced.x509cert === undefined ? undefined : normalizedPem((advanced.private_key as string | undefined) ?? app.secret),
    },
  };
}
