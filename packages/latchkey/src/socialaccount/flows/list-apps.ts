/**
 * What an operator sees of the provider applications (the admin's list and pages, `manage
 * socialapp list`): the stored ones and, read-only beside them, those of SOCIALACCOUNT_PROVIDERS.
 * Never a secret: only whether one is set. Changing them is manage-apps.ts's.
 */
import type { LatchkeyDeps } from '../../deps.js';
import { appsFromSettings } from '../apps.js';
import type { SocialApp } from '../model.js';
import { withShownName } from '../providers/registry.js';

/** What a door shows for one app: everything but the secret, which is only said to be set or not. */
export interface SocialAppSummary {
  id: number;
  provider: string;
  providerId: string;
  name: string;
  clientId: string;
  key: string;
  settings: Record<string, unknown>;
  hasSecret: boolean;
}

export function summarizeSocialApp(app: SocialApp): SocialAppSummary {
  return { id: app.id, provider: app.provider, providerId: app.providerId, name: app.name, clientId: app.clientId, key: app.key, settings: app.settings, hasSecret: app.sealedSecret !== '' };
}

/** An app of SOCIALACCOUNT_PROVIDERS as a door shows it beside the stored ones: read-only, without its secret. */
export type SettingsAppSummary = Omit<SocialAppSummary, 'id'>;

/**
 * The apps an operator sees: those stored in the database (by provider, then providerId) and,
 * read-only beside them, those of SOCIALACCOUNT_PROVIDERS; no secret, only whether one is set.
 */
export async function listSocialApps(deps: Pick<LatchkeyDeps, 'settings' | 'store' | 'providerDirectory'>): Promise<{ stored: SocialAppSummary[]; fromSettings: SettingsAppSummary[] }> {
  const stored = (await deps.store.socialApps.list()).map(summarizeSocialApp);
  const fromSettings = appsFromSettings(deps.settings.SOCIALACCOUNT_PROVIDERS).map((app) => ({
    provider: app.provider,
    providerId: app.providerId,
    // The name the pages show: an app given none goes by its kind's ("GitHub").
    name: withShownName(deps.providerDirectory.registry, app).name,
    clientId: app.clientId,
    key: app.key,
    settings: app.settings,
    hasSecret: app.secret !== '',
  }));
  return { stored, fromSettings };
}

/** A stored app, without its secret; undefined for an unknown id. */
export async function findSocialApp(deps: Pick<LatchkeyDeps, 'store'>, id: number): Promise<SocialAppSummary | undefined> {
  const row = await deps.store.socialApps.findById(id);
  return row && summarizeSocialApp(row);
}

/** How many people's accounts sign in through the app's id (what its deletion page tells). */
export function countSocialAccountsOfApp(deps: Pick<LatchkeyDeps, 'store'>, app: Pick<SocialApp, 'provider' | 'providerId'>): Promise<number> {
  return deps.store.socialAccounts.countForProvider(app.providerId || app.provider);
}
