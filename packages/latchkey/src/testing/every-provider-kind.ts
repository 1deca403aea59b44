/**
 * An app of every built-in provider kind, as SOCIALACCOUNT_PROVIDERS lists them, each with the
 * fewest settings its kind's check takes and no name of its own: for tests of what is offered (the
 * buttons, the headless configuration, which kinds take tokens), not of a sign-in. Nothing here is
 * fetched before a sign-in starts, so the addresses need not answer.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { ProviderApp } from '../socialaccount/apps.js';

/** Each kind's one app: `client_id`, and what its kind requires beside it. */
type AppEntry = { provider_id?: string; client_id: string; secret?: string; key?: string; settings?: Record<string, unknown> };

/** The SAML app: its provider_id is the identity provider's entity id; its URLs carry its client_id. */
export const SAML_ENTITY_ID = 'https://idp.example.com/entity';

/** Sign in with Apple's .p8 key: an ES256 private key, as PKCS #8 PEM. */
function appleCertificateKey(): string {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/** The settings an app of each kind needs, by kind; the kinds not listed need none. */
function requiredSettings(): Record<string, Omit<AppEntry, 'client_id'>> {
  return {
    openid_connect: { provider_id: 'corp', settings: { server_url: 'https://id.example.com' } },
    saml: { provider_id: SAML_ENTITY_ID, settings: { idp: { entity_id: SAML_ENTITY_ID, metadata_url: 'https://idp.example.com/metadata' } } },
    okta: { settings: { okta_base_url: 'dev-123.okta.com' } },
    auth0: { settings: { auth0_url: 'https://tenant.auth0.com' } },
    keycloak: { settings: { keycloak_url: 'https://id.example.com', keycloak_realm: 'staff' } },
    amazon_cognito: { settings: { domain: 'https://pool.auth.eu-west-1.amazoncognito.com' } },
    stackexchange: { key: 'request-key' },
    // The secret is the .p8 key's Key ID, the key the Team ID.
    apple: { secret: 'KEY1234567', key: 'TEAM123456', settings: { certificate_key: appleCertificateKey() } },
  };
}

/** One app of each of `kinds`, as SOCIALACCOUNT_PROVIDERS would hold them; `client_id` is `<kind>-client` (a SAML app's, its organisation slug: `acme`). */
export function providersSettingOf(kinds: readonly string[]): Record<string, { APPS: AppEntry[] }> {
  const required = requiredSettings();
  return Object.fromEntries(
    kinds.map((kind) => [kind, { APPS: [{ client_id: kind === 'saml' ? 'acme' : `${kind}-client`, secret: 'provider-secret', ...required[kind] }] }]),
  );
}

/** The app of `kind` in providersSettingOf, as a ProviderApp, for building its provider without a site. */
export function appOf(kind: string): ProviderApp {
  const entry = providersSettingOf([kind])[kind]!.APPS[0]!;
  const providerId = entry.provider_id ?? '';
  return { provider: kind, providerId, id: providerId || kind, name: '', clientId: entry.client_id, secret: entry.secret ?? '', key: entry.key ?? '', settings: entry.settings ?? {} };
}
