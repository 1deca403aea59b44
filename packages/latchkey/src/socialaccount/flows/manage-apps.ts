/**
 * Provider applications kept in the database (allauth's SocialApp rows), added, changed and
 * removed by an operator: through the admin's pages or the `socialapp` management command, by the
 * same rules (stored-app-rules.ts: an entry SOCIALACCOUNT_PROVIDERS would take, settings its kind
 * can use, no app sign-in could not tell it from). A staff member needs the admin permission for
 * the action (admin/access.ts, as every admin flow). The client secret is sealed under the secret
 * key before it reaches the store, and never leaves this module in a result or an event.
 */
import { isDeepStrictEqual } from 'node:util';
import type { User } from '../../account/model.js';
import { requireRecentAuthentication } from '../../account/flows/reauthenticate.js';
import { MANAGEMENT_COMMAND, requireAdminPermission } from '../../admin/access.js';
import type { AdminAction } from '../../admin/model.js';
import type { ClientInfo } from '../../core/client.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import type { ProviderApp } from '../apps.js';
import { openAppSecret, sealAppSecret } from '../directory.js';
import type { NewSocialApp, SocialApp } from '../model.js';
import { summarizeSocialApp, type SocialAppSummary } from './list-apps.js';
import { alreadyExists, refuseCollisions, storableApp, type SocialAppFields } from './stored-app-rules.js';
import { msg, type Message } from '../../core/i18n/message.js';

// The doors (the admin's pages, the CLI) find everything about stored apps here.
export { countSocialAccountsOfApp, findSocialApp, listSocialApps, summarizeSocialApp, type SettingsAppSummary, type SocialAppSummary } from './list-apps.js';
export type { SocialAppFields } from './stored-app-rules.js';

/**
 * Who manages apps: a staff member in the admin (their permissions are checked, and setting a
 * secret needs their recent sign-in), or the operator at the server's command line.
 */
export type SocialAppActor = StaffActor | typeof MANAGEMENT_COMMAND;

/** A staff member, and when their session last proved who they are (a sign-in or reauthentication). */
export interface StaffActor {
  user: User;
  lastAuthenticatedAt: Date | undefined;
}

/** The operator running `manage socialapp`: whoever can run it already holds the database and the secret key. */
export { MANAGEMENT_COMMAND };

export type SocialAppDeps = Pick<LatchkeyDeps, 'settings' | 'store' | 'events' | 'providerDirectory' | 'clock'>;

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

async function requirePermission(deps: Pick<LatchkeyDeps, 'store'>, actor: SocialAppActor, action: AdminAction): Promise<void> {
  if (actor !== MANAGEMENT_COMMAND) await requireAdminPermission(deps, actor.user, 'socialaccount.socialapp', action);
}

/**
 * Setting, replacing or clearing a secret is what lets a site be impersonated at its provider (or
 * a login be sent to another's), so a staff member does it only after a recent sign-in, with MFA
 * for those who have it ('reauthentication_required'), as every sensitive admin change.
 */
function requireRecentSignInForSecret(deps: Pick<LatchkeyDeps, 'clock'>, actor: SocialAppActor): void {
  if (actor !== MANAGEMENT_COMMAND) requireRecentAuthentication(deps, actor.lastAuthenticatedAt);
}

function invalid(param: string, reason: string, message: Message): LatchkeyError {
  return new LatchkeyError('invalid_input', message, { param, reason });
}

/**
 * Checks a new app without storing it or asking for its secret: the CLI runs it before prompting,
 * so that a mistake is not found after the secret was typed. addSocialApp checks it all again.
 */
export async function checkNewSocialApp(deps: SocialAppDeps, actor: SocialAppActor, fields: SocialAppFields): Promise<void> {
  await requirePermission(deps, actor, 'add');
  await refuseCollisions(deps, storableApp(deps.providerDirectory, fields, undefined));
}

function recordOf(app: ProviderApp, sealedSecret: string): NewSocialApp {
  return { provider: app.provider, providerId: app.providerId, name: app.name, clientId: app.clientId, sealedSecret, key: app.key, settings: app.settings };
}

/** Adds an app, its secret ('' for a public client, which has none) sealed; the app as stored. */
export async function addSocialApp(deps: SocialAppDeps, actor: SocialAppActor, fields: SocialAppFields & { secret: string }, client: ClientInfo): Promise<SocialAppSummary> {
  await requirePermission(deps, actor, 'add');
  if (fields.secret !== '') requireRecentSignInForSecret(deps, actor);
  const app = storableApp(deps.providerDirectory, fields, fields.secret);
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
  // A typed secret, or the clearing of a stored one.
  if (fields.secret !== undefined && (fields.secret !== '' || row.sealedSecret !== '')) requireRecentSignInForSecret(deps, actor);
  // A kept secret is checked as the app will use it (a SAML app's key may be its secret).
  const app = storableApp(deps.providerDirectory, fields, fields.secret ?? openedOrUndefined(deps, row) ?? '');
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
    throw invalid('secret', 'unreadable', msg('The stored secret cannot be read (the secret key may have changed): type it again to change the provider or provider_id.'));
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
  return new LatchkeyError('not_found', 'Social app {id} does not exist.', { reason: 'social_app_not_found', params: { id } });
}

function actorId(actor: SocialAppActor): number | null {
  return actor === MANAGEMENT_COMMAND ? null : actor.user.id;
}
