/**
 * What a verified assertion says about the person, as the sign-in flows take it: the uid, the
 * addresses and the names, read through the app's attribute_mapping (each field an attribute name
 * or a list of them, the first present one winning, as allauth). Everything the IdP sent is kept
 * as the social account's extra data: every attribute as a list of its values, by name.
 */
import { UID_MAX_LENGTH } from '../../model.js';
import { ProviderError, type ProviderEmail, type ProviderProfile } from '../provider.js';
import type { MappedField, SamlOptions } from './settings.js';

const EMAIL_NAME_ID_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

/** What the verified assertion holds. */
export interface AssertedPerson {
  nameId: string;
  nameIdFormat: string | undefined;
  /** Every attribute's values, by attribute name. */
  attributes: Readonly<Record<string, readonly string[]>>;
}

/** allauth's coercion of a string email_verified: true, 1, t, y, yes (any case) are true; anything else false. */
function isTruthy(value: string | undefined): boolean {
  return value !== undefined && ['true', '1', 't', 'y', 'yes'].includes(value.trim().toLowerCase());
}

export function profileFromAssertion(appId: string, options: Pick<SamlOptions, 'attributeMapping' | 'useNameIdForEmail'>, person: AssertedPerson): ProviderProfile {
  const first = (field: MappedField): string | undefined => {
    for (const name of options.attributeMapping[field]) {
      const value = person.attributes[name]?.find((item) => item.trim() !== '');
      if (value !== undefined) return value.trim();
    }
    return undefined;
  };
  const uid = first('uid') ?? person.nameId;
  if (uid === '') throw new ProviderError('failed', `${appId}: the assertion names nobody (no uid attribute and an empty NameID)`);
  if (uid.length > UID_MAX_LENGTH) throw new ProviderError('failed', `${appId}: the assertion's uid is ${uid.length} characters long, more than ${UID_MAX_LENGTH}`);
  const nameIdIsEmail = options.useNameIdForEmail || person.nameIdFormat === EMAIL_NAME_ID_FORMAT;
  const email = first('email') ?? (nameIdIsEmail && person.nameId.includes('@') ? person.nameId : undefined);
  const emails: ProviderEmail[] = email === undefined ? [] : [{ email, verified: isTruthy(first('email_verified')), primary: true }];
  return {
    uid,
    emails,
    data: {
      ...(email === undefined ? {} : { email }),
      ...optional('username', first('username')),
      ...optional('firstName', first('first_name')),
      ...optional('lastName', first('last_name')),
    },
    extraData: { ...person.attributes },
  };
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}
