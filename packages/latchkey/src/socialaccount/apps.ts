/**
 * Where provider applications come from, as allauth's adapter.list_apps: the entries of
 * SOCIALACCOUNT_PROVIDERS[<provider>].APPS (each typically reading its secret from an environment
 * variable in the project's settings file) and the rows of the database (the admin's, the CLI's),
 * merged. An app's own `settings` win over its provider's upper-case settings (SCOPE, AUTH_PARAMS,
 * ...), which are copied into them under allauth's lower-case names.
 */
import { z } from 'zod';
import { LatchkeyError } from '../core/errors.js';
import type { SocialApp } from './model.js';

/** An application ready to use: its secret in clear, in memory only. */
export interface ProviderApp {
  /** The kind's id: `openid_connect`, `github`, ... */
  provider: string;
  /** One app of a kind that has several (an OpenID Connect server); '' otherwise. */
  providerId: string;
  /** What URLs and social accounts carry: the providerId, else the kind's id. */
  id: string;
  /**
   * What buttons and lists call it. '' for an app of a named provider (github, google, ...) given
   * none: it goes by its kind's name, "GitHub" (providers/registry.ts withShownName, which the
   * directory applies to every app it offers). An app of a kind with several apps (openid_connect,
   * saml) given none goes by its provider_id, which tells it from the others.
   */
  name: string;
  clientId: string;
  secret: string;
  key: string;
  settings: Record<string, unknown>;
  /** The database row it came from; undefined for an app from the settings. */
  databaseId?: number;
}

/**
 * The provider-wide settings are copied into each app's settings under allauth's app-level,
 * lower-case names: SCOPE as scope, AUTH_PARAMS as auth_params, and a provider's own ones
 * (GITHUB_URL as github_url, TENANT as tenant) likewise. APPS and APP are the apps themselves.
 */
function providerWideSettings(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config)
      .filter(([name, value]) => name !== 'APPS' && name !== 'APP' && /^[A-Z][A-Z0-9_]*$/.test(name) && value !== undefined)
      .map(([name, value]) => [name.toLowerCase(), value]),
  );
}

/** The kinds that have several apps told apart by provider_id (allauth's "sub-providers"). */
const KINDS_WITH_PROVIDER_IDS = new Set(['openid_connect', 'saml']);

/** A provider_id as a URL segment: letters, digits, `-`, `_` and `.`, starting with a letter or digit. */
const PROVIDER_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const URL_SEGMENT_RULE = 'letters, digits, "-", "_" and ".", starting with a letter or digit';

/**
 * A SAML app's provider_id is its identity provider's entity id, which is usually a URL and never
 * appears in one of ours: its URLs carry the organisation slug, its client_id, instead (allauth's
 * rule). Any printable text then, up to the length a URL segment id may have.
 */
const ENTITY_ID = /^[^\s\p{Cc}]{1,200}$/u;

const appEntrySchema = z.object({
  provider_id: z.string().optional(),
  name: z.string().max(40).optional(),
  client_id: z.string().min(1, 'a client_id is required').max(191),
  // A client secret is short; a SAML app's private key (its secret) is a few kilobytes of PEM.
  secret: z.string().max(8192).optional(),
  key: z.string().max(191).optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
});
type AppEntry = z.infer<typeof appEntrySchema>;

/**
 * The apps of SOCIALACCOUNT_PROVIDERS. Throws LatchkeyError('configuration_invalid') naming the
 * provider, the entry and what is wrong (never a secret's value), so that start-up stops with one
 * clear line instead of a sign-in failing later.
 */
export function appsFromSettings(providers: Readonly<Record<string, Readonly<Record<string, unknown>>>>): ProviderApp[] {
  const apps: ProviderApp[] = [];
  for (const [provider, config] of Object.entries(providers)) {
    // allauth still reads the single "APP" of older settings.
    const entries = config.APPS ?? (config.APP === undefined ? [] : [config.APP]);
    if (!Array.isArray(entries)) throw invalid(`SOCIALACCOUNT_PROVIDERS.${provider}.APPS must be a list of apps.`);
    const providerWide = providerWideSettings(config);
    entries.forEach((entry: unknown, index) => {
      const checked = checkAppEntry(provider, entry, providerWide);
      const where = `SOCIALACCOUNT_PROVIDERS.${provider}.APPS[${index}]`;
      if ('problem' in checked) throw invalid(`${where}${checked.field === undefined ? '' : `.${checked.field}`}: ${checked.problem}.`);
      apps.push(checked.app);
    });
  }
  refuseDuplicates(apps);
  return apps;
}

/**
 * One app entry (`{provider_id, name, client_id, secret, key, settings}`) checked by the rules of
 * SOCIALACCOUNT_PROVIDERS: the app, or what is wrong with it (the field, when one is to blame, and
 * why, without a trailing period; never a secret's value). The management command `socialapp add`
 * checks the apps it stores with it, so that the database holds only apps the settings would take.
 */
export function checkAppEntry(
  provider: string,
  entry: unknown,
  providerWide: Record<string, unknown> = {},
): { app: ProviderApp } | { field: string | undefined; problem: string } {
  const parsed = appEntrySchema.safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { field: issue.path.length > 0 ? issue.path.join('.') : undefined, problem: issue.message.replace(/\.$/, '') };
  }
  const providerId = parsed.data.provider_id ?? '';
  if (KINDS_WITH_PROVIDER_IDS.has(provider) && providerId === '') return { field: undefined, problem: `a provider_id is required for ${provider} (it names the app in its URLs)` };
  if (provider === 'saml') {
    if (!ENTITY_ID.test(providerId)) return { field: 'provider_id', problem: "the identity provider's entity id, without spaces, at most 200 characters" };
    if (!PROVIDER_ID.test(parsed.data.client_id)) return { field: 'client_id', problem: `the organisation slug in the app's URLs: ${URL_SEGMENT_RULE}` };
  } else if (parsed.data.provider_id !== undefined && !PROVIDER_ID.test(providerId)) {
    return { field: 'provider_id', problem: URL_SEGMENT_RULE };
  }
  return { app: appFromEntry(provider, parsed.data, providerWide) };
}

function appFromEntry(provider: string, entry: AppEntry, providerWide: Record<string, unknown>): ProviderApp {
  const providerId = entry.provider_id ?? '';
  return {
    provider,
    providerId,
    id: providerId || provider,
    // Not the kind's id ("github"): the kind's name, which only the registry knows, is shown instead.
    name: entry.name ?? (KINDS_WITH_PROVIDER_IDS.has(provider) ? providerId : ''),
    clientId: entry.client_id,
    secret: entry.secret ?? '',
    key: entry.key ?? '',
    settings: { ...providerWide, ...entry.settings },
  };
}

/** A database row as an app, its secret opened by the caller (the secret never leaves encrypted storage otherwise). */
export function appFromRow(row: SocialApp, secret: string): ProviderApp {
  return {
    provider: row.provider,
    providerId: row.providerId,
    id: row.providerId || row.provider,
    name: row.name,
    clientId: row.clientId,
    secret,
    key: row.key,
    settings: row.settings,
    databaseId: row.id,
  };
}

/**
 * The app that serves `id` (a provider_id, or a kind's id with one app), as allauth's get_app:
 * when several match, those marked `hidden` (used only for token logins, like Apple's app for an
 * iOS bundle) are set aside; more than one left is a configuration error, refused rather than
 * guessed, since the apps may belong to different identity providers.
 */
export function findApp(apps: readonly ProviderApp[], id: string): ProviderApp | undefined {
  const matching = apps.filter((app) => app.id === id);
  if (matching.length <= 1) return matching[0];
  const visible = matching.filter((app) => app.settings.hidden !== true);
  if (visible.length === 1) return visible[0];
  throw invalid(`Several social apps answer to "${id}" (from the settings and the database, or twice in one): keep one, or mark the others "hidden".`);
}

/** The apps a login page offers: one per id, hidden ones left out. */
export function visibleApps(apps: readonly ProviderApp[]): ProviderApp[] {
  return apps.filter((app) => app.settings.hidden !== true).sort((a, b) => a.name.localeCompare(b.name));
}

function refuseDuplicates(apps: readonly ProviderApp[]): void {
  const seen = new Set<string>();
  for (const app of apps) {
    const key = `${app.id}\u0000${app.clientId}`;
    if (seen.has(key)) throw invalid(`SOCIALACCOUNT_PROVIDERS lists the app "${app.id}" with client_id "${app.clientId}" twice.`);
    seen.add(key);
  }
  const other = apps.find((app) => samlSlugTaken(apps, app));
  if (other) throw invalid(`SOCIALACCOUNT_PROVIDERS.saml lists two apps with the organisation slug (client_id) "${other.clientId}": each organisation needs its own.`);
}

/** Whether another SAML app than `app` has its organisation slug: its URLs would be ambiguous. */
export function samlSlugTaken(apps: readonly ProviderApp[], app: Pick<ProviderApp, 'provider' | 'providerId' | 'clientId'>): boolean {
  return app.provider === 'saml' && apps.some((other) => other.provider === 'saml' && other.clientId === app.clientId && other.providerId !== app.providerId);
}

function invalid(message: string): LatchkeyError {
  return new LatchkeyError('configuration_invalid', message);
}
