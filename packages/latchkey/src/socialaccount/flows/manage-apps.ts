/**
 * Provider applications kept in the database (allauth's SocialApp rows), added, changed and
 * removed by an operator: through the admin's pages or the `socialapp` management command, by the
 * same rules. An app is checked as SOCIALACCOUNT_PROVIDERS's entries are (apps.ts), its
 * OpenID Connect server must be https, it must not collide with another app, and sign-in must be
 * able to tell it from the apps answering to the same id. Its client secret is sealed under the
 * secret key before it reaches the store, and never leaves this module in a result or an event.
 *
 * Every refusal is a LatchkeyError whose `param` names the field to fix (`provider`,
 * `provider_id`, `name`, `client_id`, `secret`, `key`, `settings`), and whose `reason` says which
 * rule refused it, for a door that words its messages its own way (the CLI names its options).
 */
import { isDeepStrictEqual } from 'node:util';
import type { User } from '../../account/model.js';
import { adminGrantsOf } from '../../admin/access.js';
import type { AdminAction } from '../../admin/model.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { appFromRow, appsFromSettings, checkAppEntry, findApp, type ProviderApp } from '../apps.js';
import { openAppSecret, sealAppSecret, STORED_APP_PROVIDER_TYPES } from '../directory.js';
import type { NewSocialApp, SocialApp } from '../model.js';

/** Who manages apps: a staff member in the admin (their permissions are checked), or the operator at the server's command line. */
export type SocialAppActor = User | typeof MANAGEMENT_COMMAND;

/** The operator running `manage socialapp`: whoever can run it already holds the database and the secret key. */
export const MANAGEMENT_COMMAND = 'management_command';

/** An app as a form or the command line gives it; '' for a field left empty. */
export interface SocialAppFields {
  provider: string;
  /** Required for a type with several apps (openid_connect): it names the app in its URLs. */
  providerId: string;
  /** The button's label; empty: the providerId, else the provider type. */
  name: string;
  clientId: string;
  key: string;
  /** The app's settings: a JSON object (anything else is refused). */
  settings: unknown;
}

export type SocialAppDeps = Pick<LatchkeyDeps, 'settings' | 'store' | 'events'>;

/** The fields of an app the audit trail and a door's messages name, as the settings spell them. */
const FIELD_NAMES: Readonly<Record<keyof NewSocialApp, string>> = {
  provider: 'provider',
  providerId: 'provider_id',
  name: 'name',
  clientId: 'client_id',
  sealedSecret: 'secret',
  key: 'key',
  settings: 'settings',
};

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
export async function listSocialApps(deps: Pick<LatchkeyDeps, 'settings' | 'store'>): Promise<{ stored: SocialAppSummary[]; fromSettings: SettingsAppSummary[] }> {
  const stored = (await deps.store.socialApps.list()).map(summarizeSocialApp);
  const fromSettings = appsFromSettings(deps.settings.SOCIALACCOUNT_PROVIDERS).map((app) => ({
    provider: app.provider,
    providerId: app.providerId,
    name: app.name,
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

async function requirePermission(deps: Pick<LatchkeyDeps, 'store'>, actor: SocialAppActor, action: AdminAction): Promise<void> {
  if (actor === MANAGEMENT_COMMAND) return;
  const grants = await adminGrantsOf(deps, actor);
  if (!grants.may('socialaccount.socialapp', action)) throw new LatchkeyError('permission_denied', 'You do not have permission to do this.');
}

function invalid(param: string, reason: string, message: string): LatchkeyError {
  return new LatchkeyError('invalid_input', message, { param, reason });
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** As the OpenID Connect provider requires of its server: https, or plain http on loopback (a test provider). */
function isSecureUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/**
 * The fields as an app, by the rules of SOCIALACCOUNT_PROVIDERS's entries and then the stored
 * apps' own: a type Latchkey signs in with, and for OpenID Connect an https server_url. Throws
 * 'invalid_input' naming the field.
 */
function appOf(fields: SocialAppFields, secret: string): ProviderApp {
  const { provider } = fields;
  const choices = STORED_APP_PROVIDER_TYPES.join(', ');
  if (provider === '') throw invalid('provider', 'required', `A provider is required (${choices}).`);
  if (!STORED_APP_PROVIDER_TYPES.includes(provider)) throw invalid('provider', 'unknown', `Unknown provider "${provider}": Latchkey signs in with ${choices}.`);
  const settings = fields.settings;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw invalid('settings', 'not_an_object', 'The settings must be a JSON object, such as {"scope": ["openid", "email"]}.');
  }
  const entry = {
    ...(fields.providerId === '' ? {} : { provider_id: fields.providerId }),
    ...(fields.name === '' ? {} : { name: fields.name }),
    client_id: fields.clientId,
    ...(fields.key === '' ? {} : { key: fields.key }),
    ...(secret === '' ? {} : { secret }),
    settings,
  };
  const checked = checkAppEntry(provider, entry);
  if ('problem' in checked) {
    // An entry without a provider_id is the one problem checkAppEntry names no field for.
    if (checked.field === undefined) throw invalid('provider_id', 'provider_id_required', `${capitalized(checked.problem)}.`);
    // Never a secret's value: the problem is about its length.
    throw invalid(checked.field.split('.')[0]!, 'entry', `${capitalized(checked.problem)}.`);
  }
  const app = checked.app;
  if (provider === 'openid_connect') {
    const url = app.settings.server_url;
    if (url === undefined || url === '') throw invalid('settings', 'server_url_required', "A server_url is required for openid_connect (the identity provider's issuer URL).");
    if (!isSecureUrl(url)) throw invalid('settings', 'server_url_insecure', `server_url ${JSON.stringify(url)} is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only).`);
  }
  return app;
}

function alreadyExists(app: Pick<ProviderApp, 'provider' | 'providerId'>, id?: number): LatchkeyError {
  const which = app.providerId === '' ? app.provider : `${app.provider} "${app.providerId}"`;
  return new LatchkeyError('social_app_exists', `A social app for ${which} already exists${id === undefined ? '' : ` (id ${id})`}.`, {
    param: app.providerId === '' ? 'provider' : 'provider_id',
    reason: 'duplicate',
  });
}

/**
 * Refuses an app that another stored app has the provider and providerId of, or whose id (its
 * providerId, else its type) another app answers to, in the settings or the database, when
 * sign-in could not choose between them (apps.ts's findApp): all but one must be marked hidden.
 */
async function refuseCollisions(deps: SocialAppDeps, app: ProviderApp, exceptId?: number): Promise<void> {
  const rows = (await deps.store.socialApps.list()).filter((row) => row.id !== exceptId);
  const same = rows.find((row) => row.provider === app.provider && row.providerId === app.providerId);
  if (same) throw alreadyExists(app, same.id);
  const others = [...appsFromSettings(deps.settings.SOCIALACCOUNT_PROVIDERS), ...rows.map((row) => appFromRow(row, ''))];
  try {
    findApp([...others, app], app.id);
  } catch (error) {
    if (!isLatchkeyError(error, 'configuration_invalid')) throw error;
    throw new LatchkeyError(
      'social_app_exists',
      `A social app "${app.id}" already exists (in SOCIALACCOUNT_PROVIDERS or the database), and sign-in could not tell the two apart: `
        + 'remove the other one, or mark all but one "hidden" in their settings.',
      { param: app.providerId === '' ? 'provider' : 'provider_id', reason: 'ambiguous' },
    );
  }
}

/**
 * Checks a new app without storing it or asking for its secret: the CLI runs it before prompting,
 * so that a mistake is not found after the secret was typed. addSocialApp checks it all again.
 */
export async function checkNewSocialApp(deps: SocialAppDeps, actor: SocialAppActor, fields: SocialAppFields): Promise<void> {
  await requirePermission(deps, actor, 'add');
  await refuseCollisions(deps, appOf(fields, ''));
}

function recordOf(app: ProviderApp, sealedSecret: string): NewSocialApp {
  return { provider: app.provider, providerId: app.providerId, name: app.name, clientId: app.clientId, sealedSecret, key: app.key, settings: app.settings };
}

/** Adds an app, its secret ('' for a public client, which has none) sealed; the app as stored. */
export async function addSocialApp(deps: SocialAppDeps, actor: SocialAppActor, fields: SocialAppFields & { secret: string }, client: ClientInfo): Promise<SocialAppSummary> {
  await requirePermission(deps, actor, 'add');
  const app = appOf(fields, fields.secret);
  await refuseCollisions(deps, app);
  let created: SocialApp;
  try {
    created = await deps.store.socialApps.create(recordOf(app, sealAppSecret(deps.settings.SECRET_KEY, app, fields.secret)));
  } catch (error) {
    // Another operator's add of the same app between the check and this one.
    if (isLatchkeyError(error, 'social_app_exists')) throw alreadyExists(app);
    throw error;
  }
  await deps.events.emit('social_app_added', actorId(actor), client, { provider: created.provider, provider_id: created.providerId });
  return summarizeSocialApp(created);
}

/**
 * What a change does to the stored secret: `undefined` keeps it (a form's empty field), a string
 * replaces it, and '' clears it (a public client).
 */
export type SecretChange = string | undefined;

/**
 * Changes app `id` to `fields` (every field is given again, as a form sends it). The secret is
 * kept unless `secret` says otherwise; a kept secret is sealed again when the provider or
 * providerId changes, since a sealed secret is bound to them. Returns the app as it now is and
 * the names of the fields that changed ('secret' among them when it did; never its value); an
 * unchanged app is not written and leaves no audit entry. Throws 'not_found' for an unknown id.
 */
export async function changeSocialApp(
  deps: SocialAppDeps,
  actor: SocialAppActor,
  id: number,
  fields: SocialAppFields & { secret: SecretChange },
  client: ClientInfo,
): Promise<{ app: SocialAppSummary; changed: string[] }> {
  await requirePermission(deps, actor, 'change');
  const row = await deps.store.socialApps.findById(id);
  if (!row) throw notFound(id);
  const app = appOf(fields, fields.secret ?? '');
  await refuseCollisions(deps, app, id);
  const next = recordOf(app, sealedSecretFor(deps, row, app, fields.secret));
  const changes: Partial<NewSocialApp> = {};
  const changed: string[] = [];
  for (const name of ['provider', 'providerId', 'name', 'clientId', 'key', 'settings'] as const) {
    if (isDeepStrictEqual(next[name], row[name])) continue;
    Object.assign(changes, { [name]: next[name] });
    changed.push(FIELD_NAMES[name]);
  }
  // A secret typed again unchanged is no change; a kept one is sealed anew when the app moves.
  const secretChanged = fields.secret !== undefined && fields.secret !== openedOrUndefined(deps, row);
  if (secretChanged) changed.push(FIELD_NAMES.sealedSecret);
  if (secretChanged || changes.provider !== undefined || changes.providerId !== undefined) changes.sealedSecret = next.sealedSecret;
  if (changed.length === 0) return { app: summarizeSocialApp(row), changed };
  let updated: SocialApp | undefined;
  try {
    updated = await deps.store.socialApps.update(id, changes);
  } catch (error) {
    if (isLatchkeyError(error, 'social_app_exists')) throw alreadyExists(app);
    throw error;
  }
  if (!updated) throw notFound(id);
  await deps.events.emit('social_app_changed', actorId(actor), client, {
    provider: updated.provider,
    provider_id: updated.providerId,
    changed,
    ...(changes.provider !== undefined || changes.providerId !== undefined ? { was: { provider: row.provider, provider_id: row.providerId } } : {}),
  });
  return { app: summarizeSocialApp(updated), changed };
}

/** The stored secret in clear, or undefined when it no longer opens. */
function openedOrUndefined(deps: SocialAppDeps, row: SocialApp): string | undefined {
  try {
    return openAppSecret(deps.settings.SECRET_KEY, row);
  } catch (error) {
    if (isLatchkeyError(error, 'configuration_invalid')) return undefined;
    throw error;
  }
}

/** The sealed secret the changed app is to have. */
function sealedSecretFor(deps: SocialAppDeps, row: SocialApp, app: ProviderApp, secret: SecretChange): string {
  if (secret !== undefined) return sealAppSecret(deps.settings.SECRET_KEY, app, secret);
  if (row.sealedSecret === '' || (row.provider === app.provider && row.providerId === app.providerId)) return row.sealedSecret;
  const opened = openedOrUndefined(deps, row);
  if (opened === undefined) {
    throw invalid('secret', 'unreadable', 'The stored secret cannot be read (the secret key may have changed): type it again to change the provider or provider_id.');
  }
  return sealAppSecret(deps.settings.SECRET_KEY, app, opened);
}

/**
 * Removes app `id`; its social accounts stay (they are people's, and sign in again once an app
 * answers to their provider id), and its stored tokens stay with them, detached. Returns what was
 * removed. Throws 'not_found' for an unknown id.
 */
export async function removeSocialApp(deps: SocialAppDeps, actor: SocialAppActor, id: number, client: ClientInfo): Promise<SocialAppSummary> {
  await requirePermission(deps, actor, 'delete');
  const row = await deps.store.socialApps.findById(id);
  if (!row || !(await deps.store.socialApps.delete(id))) throw notFound(id);
  await deps.events.emit('social_app_removed', actorId(actor), client, { provider: row.provider, provider_id: row.providerId });
  return summarizeSocialApp(row);
}

function notFound(id: number): LatchkeyError {
  return new LatchkeyError('not_found', `Social app ${id} does not exist.`, { reason: 'social_app_not_found' });
}

function actorId(actor: SocialAppActor): number | null {
  return actor === MANAGEMENT_COMMAND ? null : actor.id;
}
