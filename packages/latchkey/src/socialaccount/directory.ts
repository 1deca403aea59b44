/**
 * The directory: the providers a person can sign in with, from the apps of the settings and of the
 * database, each built by its kind, made once per app configuration (a provider caches its discovery).
 */
import { decryptSecret, encryptSecret } from '../core/encryption.js';
import { sha256Hex } from '../core/crypto.js';
import { isLatchkeyError, LatchkeyError } from '../core/errors.js';
import type { Settings } from '../config/settings.js';
import type { Store } from '../store.js';
import { appFromRow, findApp, visibleApps, type ProviderApp } from './apps.js';
import type { SocialApp } from './model.js';
import type { Clock } from '../core/clock.js';
import type { ProviderContext } from './providers/kind.js';
import { ANY_HOST, privateEndpointProblem, providerHostRule, type ProviderHostRule } from './providers/private-hosts.js';
import type { ProviderHttp, SignInProvider } from './providers/provider.js';
import { privateAddressGuardedFetch, type HostLookup } from './providers/provider-fetch.js';
import { BUILT_IN_PROVIDER_KINDS, urlSlugOf, withShownName, type ProviderRegistry } from './providers/registry.js';

/** A configured provider: a provider with the app it signs in through (whose settings say, e.g., whether its addresses are trusted). */
export interface ConfiguredProvider {
  readonly provider: SignInProvider;
  /** The app, with the name it is shown by (its own, else its kind's: registry.ts withShownName). */
  readonly app: ProviderApp;
  /**
   * The segment its URLs carry after /accounts/ (an OpenID Connect app's after /accounts/oidc/): its
   * id, or its kind's slug (amazon-cognito) for an app that goes by its kind's id. Unused for SAML,
   * whose URLs carry the organisation slug.
   */
  readonly slug: string;
}

export interface ProviderDirectory {
  /** The kinds of provider there are (the stored apps' flow checks an app against its kind). */
  readonly registry: ProviderRegistry;
  /** Where a provider may be, as the settings say (the stored apps' flow holds an app's endpoints to it). */
  readonly hostRule: ProviderHostRule;
  /** The providers a login page offers, by name (none configured: none), with one read of the apps. */
  offered(): Promise<ConfiguredProvider[]>;
  /**
   * The provider serving `id`, or undefined when no app has that id, its kind is unknown, or its
   * settings are unusable (a database row stored before they were checked). With
   * `clientId` (a token login names the app it was issued for), the app with that id and client
   * id, hidden or not: a provider may have a hidden app per mobile client.
   */
  provider(id: string, clientId?: string): Promise<ConfiguredProvider | undefined>;
  /** The SAML app whose organisation slug (client_id) is `organization`, as allauth finds it for /accounts/saml/<org>/; undefined when none or unusable. */
  samlProvider(organization: string): Promise<ConfiguredProvider | undefined>;
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
 * The ids of the built-in kinds an operator may store an app of, in the order a form offers them:
 * the admin's choices and the CLI's --provider. (The stored apps' flow asks the directory's
 * registry, which also holds a project's own kinds.)
 */
export const STORABLE_KIND_IDS: readonly string[] = BUILT_IN_PROVIDER_KINDS.filter((kind) => kind.storable !== false).map((kind) => kind.id);

/**
 * Start-up's check of SOCIALACCOUNT_PROVIDERS beyond its shape (apps.ts's appsFromSettings): each
 * provider is a kind the registry knows (an unknown one, a typo or a provider that is not
 * installed, would otherwise be silently ignored), each app's settings pass its kind's check, and a
 * kind that must not run here stops start-up (the dummy in production). Throws
 * LatchkeyError('configuration_invalid') with one line naming the provider, the app and the key.
 */
export function checkSettingsApps(settings: Settings, registry: ProviderRegistry, apps: readonly ProviderApp[]): void {
  for (const provider of Object.keys(settings.SOCIALACCOUNT_PROVIDERS)) {
    if (registry.kind(provider) === undefined) {
      const known = registry.kinds().map((kind) => kind.id).join(', ');
      throw new LatchkeyError('configuration_invalid', `SOCIALACCOUNT_PROVIDERS.${provider}: unknown provider "${provider}"; Latchkey signs in with ${known}.`);
    }
  }
  const hostRule = providerHostRule(settings);
  for (const app of apps) {
    const kind = registry.kind(app.provider)!;
    const problem = kind.checkSettings(app.settings) ?? kind.checkApp?.(app) ?? privateEndpointProblem(kind.endpoints?.(app.settings) ?? [], hostRule);
    if (problem !== undefined) {
      throw new LatchkeyError('configuration_invalid', `SOCIALACCOUNT_PROVIDERS.${app.provider}: the app "${app.id}" has unusable settings: ${problem.message}.`);
    }
    kind.checkEnvironment?.(settings);
  }
}

/**
 * A provider of the app's kind; undefined for a kind the registry does not know, or settings it
 * cannot use, its endpoints among them (on a private address in production).
 */
function providerFor(registry: ProviderRegistry, app: ProviderApp, context: ProviderContext): SignInProvider | undefined {
  const kind = registry.kind(app.provider);
  if (kind === undefined) return undefined;
  if (privateEndpointProblem(kind.endpoints?.(app.settings) ?? [], context.http.hostRule ?? ANY_HOST) !== undefined) return undefined;
  try {
    return kind.build(app, context);
  } catch (error) {
    // Only a database row can get here (start-up checked the settings' apps, and the stored apps'
    // flow checks what it stores): it is left out, as an app of an unknown kind, until an operator
    // fixes it, rather than breaking every page that lists the providers.
    if (isLatchkeyError(error, 'configuration_invalid')) return undefined;
    throw error;
  }
}

/**
 * `settingsApps` are SOCIALACCOUNT_PROVIDERS's (appsFromSettings, read at start-up so that a mistake
 * there stops it with one line); the database's apps are read at each use, so that an app added
 * by an operator works without a restart. A test may give the fetch providers use, or, in
 * production, how the guarded one resolves host names.
 */
export function createProviderDirectory(
  deps: { settings: Settings; clock: Clock; store: Pick<Store, 'socialApps'>; settingsApps: readonly ProviderApp[]; registry: ProviderRegistry },
  options: { fetch?: typeof fetch; lookup?: HostLookup } = {},
): ProviderDirectory {
  const fromSettings = deps.settingsApps;
  const hostRule = providerHostRule(deps.settings);
  // In production every request to a provider goes through the fetch that refuses private
  // addresses as it connects, unless a test gives its own; elsewhere the global fetch.
  const providerFetch = options.fetch ?? (hostRule.privateRefused ? privateAddressGuardedFetch(hostRule, options.lookup ? { lookup: options.lookup } : {}) : undefined);
  const http: ProviderHttp = { timeoutSeconds: deps.settings.SOCIALACCOUNT_REQUESTS_TIMEOUT, hostRule, ...(providerFetch ? { fetch: providerFetch } : {}) };
  const context: ProviderContext = { settings: deps.settings, clock: deps.clock, http };
  const providers = new Map<string, ConfiguredProvider | undefined>();

  async function allApps(): Promise<ProviderApp[]> {
    const rows = await deps.store.socialApps.list();
    // Named before anything sorts or shows them: an app without a name goes by its kind's.
    return [...fromSettings, ...rows.map((row) => appFromRow(row, openAppSecret(deps.settings.SECRET_KEY, row)))].map((app) => withShownName(deps.registry, app));
  }

  /** The configured provider of an app, one per app configuration: a changed app (new secret, new server) gets a new one. */
  function configured(app: ProviderApp): ConfiguredProvider | undefined {
    const fingerprint = sha256Hex(JSON.stringify(app));
    if (!providers.has(fingerprint)) {
      const provider = providerFor(deps.registry, app, context);
      providers.set(fingerprint, provider && { provider, app, slug: urlSlugOf(deps.registry, app) });
    }
    return providers.get(fingerprint);
  }

  return {
    registry: deps.registry,
    hostRule,
    async offered() {
      const visible = visibleApps(await allApps()).filter((app) => deps.registry.kind(app.provider) !== undefined);
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
    async samlProvider(organization) {
      const app = (await allApps()).find((candidate) => candidate.provider === 'saml' && candidate.clientId === organization);
      return app && configured(app);
    },
  };
}
