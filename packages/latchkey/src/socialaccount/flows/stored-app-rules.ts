/**
 * What an app must be to be stored (manage-apps.ts adds and changes it through these): an entry
 * SOCIALACCOUNT_PROVIDERS would take (apps.ts), of a kind an operator may store, with settings its
 * kind can use (the check start-up runs on the settings' apps, providers/app-settings.ts) and
 * endpoints where a provider may be (providers/private-hosts.ts), and no other app that sign-in
 * could not tell it from.
 *
 * Every refusal is a LatchkeyError whose `param` names the field to fix (`provider`,
 * `provider_id`, `name`, `client_id`, `secret`, `key`, `settings`), and whose `reason` says which
 * rule refused it, for a door that words its messages its own way (the CLI names its options).
 */
import type { LatchkeyDeps } from '../../deps.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { appFromRow, appsFromSettings, checkAppEntry, findApp, samlSlugTaken, type ProviderApp } from '../apps.js';
import { settingProblemSentence } from '../providers/app-settings.js';
import type { ProviderDirectory } from '../directory.js';
import { privateEndpointProblem } from '../providers/private-hosts.js';
import { withShownName } from '../providers/registry.js';
import { msg, type Message } from '../../core/i18n/message.js';

/** An app as a form or the command line gives it; '' for a field left empty. */
export interface SocialAppFields {
  provider: string;
  /** Required for a type with several apps (openid_connect): it names the app in its URLs. */
  providerId: string;
  /** The button's label; empty: the providerId for a type with several apps, else the kind's name ("GitHub"). */
  name: string;
  clientId: string;
  key: string;
  /** The app's settings: a JSON object (anything else is refused). */
  settings: unknown;
}

function invalid(param: string, reason: string, message: string | Message): LatchkeyError {
  return new LatchkeyError('invalid_input', message, { param, reason });
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * The fields as an app, by the rules of SOCIALACCOUNT_PROVIDERS's entries and the kind's settings
 * check. A missing required setting is refused with the reason `<key>_required` (the CLI points at
 * its option for server_url), any other unusable one with `invalid_setting`. Throws 'invalid_input'.
 * `secret` undefined: not known yet, so the kind's rules that need it (checkApp) are left for later.
 */
export function storableApp(providers: Pick<ProviderDirectory, 'registry' | 'hostRule'>, fields: SocialAppFields, secret: string | undefined): ProviderApp {
  const { registry } = providers;
  const { provider } = fields;
  const storable = registry.storableKinds();
  const choices = storable.map((kind) => kind.id).join(', ');
  if (provider === '') throw invalid('provider', 'required', msg('A provider is required ({choices}).', { choices }));
  const kind = storable.find((candidate) => candidate.id === provider);
  if (kind === undefined) throw invalid('provider', 'unknown', msg('Unknown provider "{provider}": Latchkey signs in with {choices}.', { provider, choices }));
  const settings = fields.settings;
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw invalid('settings', 'not_an_object', msg('The settings must be a JSON object, such as {example}.', { example: '{"scope": ["openid", "email"]}' }));
  }
  const entry = {
    ...(fields.providerId === '' ? {} : { provider_id: fields.providerId }),
    ...(fields.name === '' ? {} : { name: fields.name }),
    client_id: fields.clientId,
    ...(fields.key === '' ? {} : { key: fields.key }),
    ...(secret === undefined || secret === '' ? {} : { secret }),
    settings,
  };
  const checked = checkAppEntry(provider, entry);
  if ('problem' in checked) {
    // An entry without a provider_id is the one problem checkAppEntry names no field for.
    if (checked.field === undefined) throw invalid('provider_id', 'provider_id_required', `${capitalized(checked.problem)}.`);
    // Never a secret's value: the problem is about its length.
    throw invalid(checked.field.split('.')[0]!, 'entry', `${capitalized(checked.problem)}.`);
  }
  // Rules that need the secret wait until it is known (the CLI checks an app before asking for it).
  const problem = kind.checkSettings(checked.app.settings)
    ?? privateEndpointProblem(kind.endpoints?.(checked.app.settings) ?? [], providers.hostRule)
    ?? kind.checkStored?.(checked.app)
    ?? (secret === undefined ? undefined : kind.checkApp?.(checked.app));
  if (problem !== undefined) {
    throw invalid('settings', problem.reason === 'required' ? `${problem.key}_required` : 'invalid_setting', settingProblemSentence(problem));
  }
  // Stored with the name it is shown by, as allauth's SocialApp always has one.
  return withShownName(registry, checked.app);
}

export function alreadyExists(app: Pick<ProviderApp, 'provider' | 'providerId'>, id?: number): LatchkeyError {
  const { provider, providerId } = app;
  const options = { param: providerId === '' ? 'provider' : 'provider_id', reason: 'duplicate' };
  // Each wording whole, for translators: the app's provider, its provider_id when it has one, the stored app's id when known.
  if (providerId === '') {
    if (id === undefined) return new LatchkeyError('social_app_exists', 'A social app for {provider} already exists.', { ...options, params: { provider } });
    return new LatchkeyError('social_app_exists', 'A social app for {provider} already exists (id {id}).', { ...options, params: { provider, id } });
  }
  if (id === undefined) return new LatchkeyError('social_app_exists', 'A social app for {provider} "{provider_id}" already exists.', { ...options, params: { provider, provider_id: providerId } });
  return new LatchkeyError('social_app_exists', 'A social app for {provider} "{provider_id}" already exists (id {id}).', { ...options, params: { provider, provider_id: providerId, id } });
}

/**
 * Refuses an app that another stored app has the provider and providerId of, or whose id (its
 * providerId, else its kind's id) another app answers to, in the settings or the database, when
 * sign-in could not choose between them (apps.ts's findApp): all but one must be marked hidden.
 */
export async function refuseCollisions(deps: Pick<LatchkeyDeps, 'settings' | 'store'>, app: ProviderApp, exceptId?: number): Promise<void> {
  const rows = (await deps.store.socialApps.list()).filter((row) => row.id !== exceptId);
  const same = rows.find((row) => row.provider === app.provider && row.providerId === app.providerId);
  if (same) throw alreadyExists(app, same.id);
  const others = [...appsFromSettings(deps.settings.SOCIALACCOUNT_PROVIDERS), ...rows.map((row) => appFromRow(row, ''))];
  if (samlSlugTaken(others, app)) {
    throw new LatchkeyError('social_app_exists', 'A SAML app with the organisation slug "{client_id}" already exists: each organisation needs its own client_id.', {
      param: 'client_id',
      reason: 'duplicate',
      params: { client_id: app.clientId },
    });
  }
  try {
    findApp([...others, app], app.id);
  } catch (error) {
    if (!isLatchkeyError(error, 'configuration_invalid')) throw error;
    throw new LatchkeyError(
      'social_app_exists',
      'A social app "{id}" already exists (in SOCIALACCOUNT_PROVIDERS or the database), and sign-in could not tell the two apart: remove the other one, or mark all but one "hidden" in their settings.',
      { param: app.providerId === '' ? 'provider' : 'provider_id', reason: 'ambiguous', params: { id: app.id } },
    );
  }
}
