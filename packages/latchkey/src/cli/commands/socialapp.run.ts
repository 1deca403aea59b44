// What `manage socialapp list|add|remove` does (its command line is declared in socialapp.ts). An
// app's client secret is read from LATCHKEY_SOCIALAPP_SECRET or typed at a prompt; it is stored
// encrypted under the secret key.
import { isLatchkeyError } from '../../core/errors.js';
import { appsFromSettings, type ProviderApp } from '../../socialaccount/apps.js';
import { withShownName } from '../../socialaccount/providers/registry.js';
import { STORABLE_KIND_IDS } from '../../socialaccount/directory.js';
import {
  addSocialApp,
  checkNewSocialApp,
  MANAGEMENT_COMMAND,
  removeSocialApp,
  type SocialAppFields,
  type SocialAppSummary,
} from '../../socialaccount/flows/manage-apps.js';
import type { SocialApp } from '../../socialaccount/model.js';
import type { ParsedArguments } from '../arguments.js';
import { MANAGEMENT_CLIENT, withLatchkey, type CommandContext } from '../command.js';
import { CommandError, Prompter, type CommandIO } from '../io.js';
import { SOCIALAPP_SECRET_VARIABLE } from './shared-names.js';

/** The options naming each field of an app entry, for messages that point at what to fix. */
const OPTION_OF_FIELD: Readonly<Record<string, string>> = {
  provider_id: '--provider-id',
  name: '--name',
  client_id: '--client-id',
  key: '--key',
  secret: SOCIALAPP_SECRET_VARIABLE,
  settings: '--settings',
};

/** `socialapp list`: the database's apps, with their ids, then those of the settings. */
export async function listAllApps(context: CommandContext): Promise<number> {
  return withLatchkey(context, async (latchkey) => {
    // An app of the settings given no name is listed by the name the pages show: its kind's.
    const fromSettings = appsFromSettings(context.settings.SOCIALACCOUNT_PROVIDERS).map((app) => withShownName(latchkey.deps.providerDirectory.registry, app));
    listApps(context.io, await latchkey.deps.store.socialApps.list(), fromSettings);
    return 0;
  });
}

function listApps(io: CommandIO, rows: readonly SocialApp[], fromSettings: readonly ProviderApp[]): void {
  if (rows.length === 0 && fromSettings.length === 0) {
    io.stdout.write('No social apps: none in the database, none in SOCIALACCOUNT_PROVIDERS.\n');
    return;
  }
  const describe = (app: { provider: string; providerId: string; name: string; clientId: string }, hasSecret: boolean) =>
    `provider ${app.provider}, provider_id ${app.providerId || '-'}, name ${JSON.stringify(app.name)}, client_id ${JSON.stringify(app.clientId)}, secret: ${hasSecret ? 'set' : 'none'}`;
  for (const row of rows) io.stdout.write(`id ${row.id}: ${describe(row, row.sealedSecret !== '')}\n`);
  for (const app of fromSettings) io.stdout.write(`from the settings (SOCIALACCOUNT_PROVIDERS): ${describe(app, app.secret !== '')}\n`);
}

/** `socialapp add`. */
export async function addApp(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { io } = context;
  const fields: SocialAppFields = {
    provider: parsed.string('provider') ?? '',
    providerId: parsed.string('provider-id') ?? '',
    name: parsed.string('name') ?? '',
    clientId: parsed.string('client-id') ?? '',
    key: parsed.string('key') ?? '',
    settings: appSettingsFrom(parsed.string('settings'), parsed.string('server-url')),
  };
  return withLatchkey(context, async (latchkey) => {
    try {
      // Everything is checked before the secret is asked for, so that a mistake is not found after typing it.
      await checkNewSocialApp(latchkey.deps, MANAGEMENT_COMMAND, fields);
      const secret = await clientSecret(io, { noinput: parsed.flag('noinput'), noSecret: parsed.flag('no-secret') });
      const created = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...fields, secret }, MANAGEMENT_CLIENT);
      io.stdout.write(`Social app added with id ${created.id}.\n`);
      return 0;
    } catch (error) {
      throw commandErrorOf(error);
    }
  });
}

/** The app's settings: --settings's JSON object, with --server-url as its `server_url`. */
function appSettingsFrom(json: string | undefined, serverUrl: string | undefined): Record<string, unknown> {
  let appSettings: Record<string, unknown> = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new CommandError(`--settings must be a JSON object, such as '{"scope":["openid","email"]}'.`);
    }
    appSettings = parsed as Record<string, unknown>;
  }
  if (serverUrl !== undefined) {
    if (appSettings.server_url !== undefined && appSettings.server_url !== serverUrl) throw new CommandError('--server-url and the server_url of --settings differ: give one.');
    appSettings = { ...appSettings, server_url: serverUrl };
  }
  return appSettings;
}

/**
 * A refusal of the flow (socialaccount/flows/manage-apps.ts) as one error line, naming the option
 * to fix where the flow names a field.
 */
function commandErrorOf(error: unknown): unknown {
  if (!isLatchkeyError(error)) return error;
  const choices = STORABLE_KIND_IDS.join(', ');
  const lowered = error.message.charAt(0).toLowerCase() + error.message.slice(1);
  switch (error.reason) {
    case 'required':
      if (error.param === 'provider') return new CommandError(`--provider is required (${choices}).`);
      break;
    case 'server_url_required':
      return new CommandError("--server-url is required for openid_connect (the identity provider's issuer URL).");
    case 'provider_id_required':
      return new CommandError(lowered);
    case 'entry': {
      const option = error.param === undefined ? undefined : (OPTION_OF_FIELD[error.param] ?? error.param);
      return new CommandError(option === undefined ? lowered : `${option}: ${lowered}`);
    }
  }
  return new CommandError(error.message);
}

/**
 * The client secret: none with --no-secret (a public client), else LATCHKEY_SOCIALAPP_SECRET, else
 * typed at the prompt without echo. With --noinput and no variable, refused: a confidential client
 * without its secret cannot sign anyone in.
 */
async function clientSecret(io: CommandIO, options: { noinput: boolean; noSecret: boolean }): Promise<string> {
  const fromEnvironment = io.env[SOCIALAPP_SECRET_VARIABLE] ?? '';
  if (options.noSecret) {
    if (fromEnvironment !== '') throw new CommandError(`--no-secret contradicts ${SOCIALAPP_SECRET_VARIABLE}, which is set: unset one.`);
    return '';
  }
  if (fromEnvironment !== '') return fromEnvironment;
  if (options.noinput) {
    throw new CommandError(`A client secret is required: with --noinput, set ${SOCIALAPP_SECRET_VARIABLE} (or give --no-secret for a public client, which has none).`);
  }
  const prompter = new Prompter(io);
  let secret: string;
  try {
    secret = await prompter.ask('Client secret: ', { secret: true });
  } finally {
    prompter.close();
  }
  if (secret === '') throw new CommandError('No client secret was typed: give --no-secret for a public client, which has none.');
  return secret;
}

/** `socialapp remove <id>`. */
export async function removeApp(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { io } = context;
  const raw = parsed.argument('id');
  const id = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : undefined;
  if (id === undefined) throw new CommandError(`Social app id must be a number, as \`socialapp list\` shows it; got ${JSON.stringify(raw)}.`);
  return withLatchkey(context, async (latchkey) => {
    let app: SocialAppSummary;
    try {
      app = await removeSocialApp(latchkey.deps, MANAGEMENT_COMMAND, id, MANAGEMENT_CLIENT);
    } catch (error) {
      throw commandErrorOf(error);
    }
    io.stdout.write(`Social app ${id} (${app.provider}${app.providerId === '' ? '' : ` "${app.providerId}"`}) removed.\n`);
    return 0;
  });
}
