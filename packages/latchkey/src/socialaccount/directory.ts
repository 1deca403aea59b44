/**
 * The providers a person can sign in with: the apps of the settings and of the database, each as a
 * provider of its type, made once per app configuration (a provider caches its discovery).
 */
import { decryptSecret, encryptSecret } from '../core/encryption.js';
import { sha256Hex } from '../core/crypto.js';
import { LatchkeyError } from '../core/errors.js';
import type { Settings } from '../config/settings.js';
import type { Store } from '../store.js';
import { appFromRow, findApp, visibleApps, type ProviderApp } from './apps.js';
import type { SocialApp } from './model.js';
import type { Clock } from '../core/clock.js';
import { dummyProvider, refuseDummyProviderInProduction } from './providers/dummy.js';
import { openIdConnectProvider, type OpenIdConnectSettings } from './providers/openid-connect.js';
import type { ProviderHttp, RedirectProvider } from './providers/provider.js';

/** A provider with the app it signs in through (whose settings say, e.g., whether its addresses are trusted). */
export interface ConfiguredProvider {
  readonly provider: RedirectProvider;
  readonly app: ProviderApp;
}

export interface ProviderDirectory {
  /** The providers a login page offers, by name (none configured: none), with one read of the apps. */
  offered(): Promise<ConfiguredProvider[]>;
  /**
   * The provider serving `id`, or undefined when no app has that id or its type is unknown. With
   * `clientId` (a token login names the app it was issued for), the app with that id and client
   * id, hidden or not: a provider may have a hidden app per mobile client.
   */
  provider(id: string, clientId?: string): Promise<ConfiguredProvider | undefined>;
}

const SECRET_PURPOSE = 'social-app-secret';

/** Binds an app's encrypted secret to its row, so a secret copied onto another app's row does not open. */
function secretBinding(app: Pick<SocialApp, 'provider' | 'providerId'>): string {
  return `social-app:${app.provider}:${app.providerId}`;
}

/** The client secret as the database keeps it (the admin and the CLI store apps through this). */
export function sealAppSecret(secretKey: string, app: Pick<SocialApp, 'provider' | 'providerId'>, secret: string): string {
  return secret === '' ? '' : encryptSecret(secretKey, SECRET_PURPOSE, Buffer.from(secret, 'utf8'), secretBinding(app));
}

/**
 * The client secret of a database row, in clear (for signing in, and for sealing it again when the
 * row's provider or providerId changes). Throws 'configuration_invalid' when it does not open.
 */
export function openAppSecret(secretKey: string, row: SocialApp): string {
  if (row.sealedSecret === '') return '';
  const opened = decryptSecret(secretKey, SECRET_PURPOSE, row.sealedSecret, secretBinding(row));
  // A secret that no longer opens (the secret key changed, or the row was tampered with) is a
  // configuration problem the operator must fix, not something to sign in without.
  if (!opened) throw new LatchkeyError('configuration_invalid', `The secret of the social app "${row.providerId || row.provider}" cannot be read: store it again (the secret key may have changed).`);
  return Buffer.from(opened).toString('utf8');
}

/**
 * The provider types Latchkey can sign in with: any OpenID Connect server, and allauth's `dummy`
 * for development and tests (the named providers' catalogue, built on providers/oauth2.ts, comes
 * later).
 */
const PROVIDER_TYPES = new Set(['openid_connect', 'dummy']);

/**
 * The provider types an operator may store an app of in the database (the admin's choice, the
 * CLI's --provider), in the order a form offers them: those Latchkey signs in with, but not the
 * dummy, which signs anyone in as anyone and belongs in a development settings file, never in a
 * row that would outlive the environment it was added in. An app of another type would be stored
 * and then never offered, so it is refused rather than silently ignored.
 */
export const STORED_APP_PROVIDER_TYPES: readonly string[] = [...PROVIDER_TYPES].filter((type) => type !== 'dummy');

/** Start-up's check of the settings' apps beyond their shape: a provider that signs anyone in as anyone stops a production start-up. */
export function checkSettingsApps(settings: Settings, apps: readonly ProviderApp[]): void {
  if (apps.some((app) => app.provider === 'dummy')) refuseDummyProviderInProduction(settings.ENVIRONMENT);
}

interface ProviderContext {
  settings: Settings;
  clock: Clock;
  http: ProviderHttp;
}

/** A provider of the app's type, or undefined for a type Latchkey does not know. */
function providerFor(app: ProviderApp, { settings, clock, http }: ProviderContext): RedirectProvider | undefined {
  switch (app.provider) {
    case 'openid_connect':
      return openIdConnectProvider({ providerId: app.providerId, name: app.name, clientId: app.clientId, secret: app.secret, settings: app.settings as unknown as OpenIdConnectSettings }, http);
    case 'dummy':
      return dummyProvider({ environment: settings.ENVIRONMENT, siteUrl: settings.SITE_URL, secretKey: settings.SECRET_KEY, clock, id: app.id, name: app.name });
    default:
      return undefined;
  }
}

/**
 * `settingsApps` are SOCIALACCOUNT_PROVIDERS's (appsFromSettings, read at start-up so that a mistake
 * there stops it with one line); the database's apps are read at each use, so that an app added
 * by an operator works without a restart.
 */
export function createProviderDirectory(
  deps: { settings: Settings; clock: Clock; store: Pick<Store, 'socialApps'>; settingsApps: readonly ProviderApp[] },
  options: { fetch?: typeof fetch } = {},
): ProviderDirectory {
  const fromSettings = deps.settingsApps;
  const http: ProviderHttp = { timeoutSeconds: deps.settings.SOCIALACCOUNT_REQUESTS_TIMEOUT, ...(options.fetch ? { fetch: options.fetch } : {}) };
  const context: ProviderContext = { settings: deps.settings, clock: deps.clock, http };
  const providers = new Map<string, ConfiguredProvider | undefined>();

  async function allApps(): Promise<ProviderApp[]> {
    const rows = await deps.store.socialApps.list();
    return [...fromSettings, ...rows.map((row) => appFromRow(row, openAppSecret(deps.settings.SECRET_KEY, row)))];
  }

  /** One provider per app configuration: a changed app (new secret, new server) gets a new one. */
  function configured(app: ProviderApp): ConfiguredProvider | undefined {
    const fingerprint = sha256Hex(JSON.stringify(app));
    if (!providers.has(fingerprint)) {
      const provider = providerFor(app, context);
      providers.set(fingerprint, provider && { provider, app });
    }
    return providers.get(fingerprint);
  }

  return {
    async offered() {
      const visible = visibleApps(await allApps()).filter((app) => PROVIDER_TYPES.has(app.provider));
      // Two visible apps with one id are a mistake the sign-in refuses (findApp): a list leaves them out.
      const ids = visible.map((app) => app.id);
      const unique = visible.filter((app) => ids.indexOf(app.id) === ids.lastIndexOf(app.id));
      return unique.flatMap((app) => configured(app) ?? []);
    },
    async provider(id, clientId) {
      const apps = await allApps();
      const app = clientId === undefined ? findApp(apps, id) : apps.find((candidate) => candidate.id === id && candidate.clientId === clientId);
      return app && configured(app);
    },
  };
}
