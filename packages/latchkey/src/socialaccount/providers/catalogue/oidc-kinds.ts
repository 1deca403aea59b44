/**
 * What the OpenID Connect-based named providers (google, slack, okta, ...) share beyond
 * named-openid-connect.ts: the rule that only some of them take headless token logins, and the
 * readers of settings that name where the provider lives.
 */
import { anEndpoint, type SettingProblem, type SettingReader } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { SECURE_URL_RULE, secureUrl } from '../secure-url.js';

/**
 * The kind without headless token login. allauth verifies ID tokens a mobile app hands over only
 * for google, apple, facebook and openid_connect; every other provider answers
 * token_authentication_not_supported, as here, although the named OpenID Connect base could verify
 * them: the headless API's provider list (`flows`) then says what allauth's says.
 */
export function withoutTokenLogin(kind: ProviderKind): ProviderKind {
  return {
    ...kind,
    build(app, context) {
      const provider = kind.build(app, context);
      if (provider.protocol !== 'oauth2') return provider;
      const withoutIdToken = { ...provider };
      delete withoutIdToken.verifyIdToken;
      return withoutIdToken;
    },
  };
}

/**
 * A host such as `dev-123.okta.com` (as allauth's OKTA_BASE_URL), taken as https; or a whole URL,
 * https or loopback http (a proxy, a test server). Its value is the URL as text, without a trailing slash.
 */
export const aHostOrUrl: SettingReader<string> = (value, key) => {
  if (typeof value !== 'string' || value.trim() === '') return { problem: `${key} must be a host name or an https URL, not ${value === '' ? 'an empty string' : `a ${typeof value}`}` };
  const text = value.trim();
  const url = secureUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  if (url === undefined || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return { problem: `${key} ${JSON.stringify(text)} is neither a host nor an https URL without query (${SECURE_URL_RULE})` };
  }
  return { value: url.href.replace(/\/+$/, '') };
};

/** An https (or loopback http) URL, as text without a trailing slash: an issuer's base. */
export const aUrlText: SettingReader<string> = (value, key) => {
  const read = anEndpoint(value, key);
  return 'problem' in read ? read : { value: read.value.href.replace(/\/+$/, '') };
};

/** The value of a setting the kind's reader takes, or the problem to report (required when absent, else the reader's). */
export function requiredSetting(provider: string, settings: Readonly<Record<string, unknown>>, key: string, what: string, reader: SettingReader<string>): string | SettingProblem {
  const value = settings[key];
  if (value === undefined || value === '') return { key, reason: 'required', message: `${/^[aeiou]/.test(key) ? 'an' : 'a'} ${key} is required for ${provider} (${what})` };
  const read = reader(value, key);
  return 'problem' in read ? { key, reason: 'invalid', message: read.problem } : read.value;
}
