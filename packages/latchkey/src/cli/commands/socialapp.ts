// `manage socialapp list|add|remove`: configures social sign-in apps in the database without the
// admin (allauth keeps them in SocialApp rows). An app's client secret is read from
// LATCHKEY_SOCIALAPP_SECRET or typed at a prompt, never taken from the command line, where `ps` and
// the shell's history would show it; it is stored encrypted under the secret key.
import { parseArgs } from 'node:util';
import { isLatchkeyError } from '../../core/errors.js';
import { appFromRow, appsFromSettings, checkAppEntry, findApp, type ProviderApp } from '../../socialaccount/apps.js';
import { sealAppSecret } from '../../socialaccount/directory.js';
import type { SocialApp } from '../../socialaccount/model.js';
import { withLatchkey, type CommandContext } from '../command.js';
import { CommandError, Prompter, type CommandIO } from '../io.js';

/** Where `socialapp add` reads the client secret from when no one is there to type it. */
export const SOCIALAPP_SECRET_VARIABLE = 'LATCHKEY_SOCIALAPP_SECRET';

const USAGE =
  'Usage: socialapp list | socialapp add --provider P [--provider-id ID] [--name N] --client-id C [--server-url URL] [--key K] [--settings JSON] [--noinput] [--no-secret] | socialapp remove <id>';

/**
 * The provider types Latchkey can sign in with (socialaccount/directory.ts): an app of another
 * type would be stored and then never offered, so it is refused here rather than silently ignored.
 */
const SIGN_IN_TYPES = ['openid_connect'];

/** The options naming each field of an app entry, for messages that point at what to fix. */
const OPTION_OF_FIELD: Readonly<Record<string, string>> = {
  provider_id: '--provider-id',
  name: '--name',
  client_id: '--client-id',
  key: '--key',
  secret: SOCIALAPP_SECRET_VARIABLE,
  settings: '--settings',
};

export async function socialapp({ settings, io, args }: CommandContext): Promise<number> {
  refuseSecretOnCommandLine(args);
  const [action, ...rest] = args;
  switch (action) {
    case 'list':
      if (rest.length > 0) throw new CommandError('Usage: socialapp list');
      return withLatchkey(settings, async (latchkey) => {
        listApps(io, await latchkey.deps.store.socialApps.list(), appsFromSettings(settings.SOCIALACCOUNT_PROVIDERS));
        return 0;
      });
    case 'add':
      return addApp({ settings, io, args: rest });
    case 'remove':
      return removeApp({ settings, io, args: rest });
    default:
      throw new CommandError(USAGE);
  }
}

/**
 * A secret given as an option (`--secret`, `--secret=...`, `--client-secret`, ...) is refused
 * before anything else happens. The message names the option, never its value.
 */
function refuseSecretOnCommandLine(args: readonly string[]): void {
  for (const arg of args) {
    if (arg === '--') break;
    if (!arg.startsWith('-')) continue;
    const option = arg.split('=', 1)[0]!;
    if (option !== '--no-secret' && /secret/i.test(option)) {
      throw new CommandError(
        `${option} is not accepted: a secret on the command line is visible to every user in \`ps\` and stays in the shell's history. `
          + `Set ${SOCIALAPP_SECRET_VARIABLE}, or leave it unset to type the secret at the prompt.`,
      );
    }
  }
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

async function addApp({ settings, io, args }: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      provider: { type: 'string' },
      'provider-id': { type: 'string' },
      name: { type: 'string' },
      'client-id': { type: 'string' },
      key: { type: 'string' },
      'server-url': { type: 'string' },
      settings: { type: 'string' },
      noinput: { type: 'boolean' },
      'no-secret': { type: 'boolean' },
    },
  });
  const provider = values.provider;
  if (provider === undefined || provider === '') throw new CommandError(`--provider is required (${SIGN_IN_TYPES.join(', ')}).`);
  if (!SIGN_IN_TYPES.includes(provider)) throw new CommandError(`Unknown provider "${provider}": Latchkey signs in with ${SIGN_IN_TYPES.join(', ')}.`);
  const appSettings = appSettingsFrom(provider, values.settings, values['server-url']);
  const entry = {
    ...(values['provider-id'] === undefined ? {} : { provider_id: values['provider-id'] }),
    ...(values.name === undefined ? {} : { name: values.name }),
    client_id: values['client-id'] ?? '',
    ...(values.key === undefined ? {} : { key: values.key }),
    settings: appSettings,
  };
  // Everything is checked before the secret is asked for, so that a mistake is not found after typing it.
  const unchecked = checked(provider, entry);
  return withLatchkey(settings, async (latchkey) => {
    const socialApps = latchkey.deps.store.socialApps;
    const rows = await socialApps.list();
    const same = rows.find((row) => row.provider === unchecked.provider && row.providerId === unchecked.providerId);
    if (same) throw alreadyExists(unchecked, same.id);
    refuseAmbiguity(unchecked, [...appsFromSettings(settings.SOCIALACCOUNT_PROVIDERS), ...rows.map((row) => appFromRow(row, ''))]);
    const secret = await clientSecret(io, { noinput: values.noinput === true, noSecret: values['no-secret'] === true });
    const app = checked(provider, { ...entry, secret });
    let created: SocialApp;
    try {
      created = await socialApps.create({
        provider: app.provider,
        providerId: app.providerId,
        name: app.name,
        clientId: app.clientId,
        sealedSecret: sealAppSecret(settings.SECRET_KEY, app, secret),
        key: app.key,
        settings: app.settings,
      });
    } catch (error) {
      // Another operator's add of the same app between the check above and this one.
      if (isLatchkeyError(error, 'social_app_exists')) throw alreadyExists(app);
      throw error;
    }
    io.stdout.write(`Social app added with id ${created.id}.\n`);
    return 0;
  });
}

/** The app's settings: --settings's JSON object, with --server-url as its `server_url`. */
function appSettingsFrom(provider: string, json: string | undefined, serverUrl: string | undefined): Record<string, unknown> {
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
  if (provider === 'openid_connect') {
    const url = appSettings.server_url;
    if (url === undefined || url === '') throw new CommandError('--server-url is required for openid_connect (the identity provider\'s issuer URL).');
    if (!isSecureUrl(url)) throw new CommandError(`server_url ${JSON.stringify(url)} is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only).`);
  }
  return appSettings;
}

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

/** The entry as an app, by the rules SOCIALACCOUNT_PROVIDERS's entries follow, or the reason it is not one. */
function checked(provider: string, entry: Record<string, unknown>): ProviderApp {
  const result = checkAppEntry(provider, entry);
  if ('app' in result) return result.app;
  const field = result.field?.split('.')[0];
  const option = field === undefined ? undefined : (OPTION_OF_FIELD[field] ?? field);
  throw new CommandError(`${option === undefined ? '' : `${option}: `}${result.problem}.`);
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

function alreadyExists(app: ProviderApp, id?: number): CommandError {
  const which = app.providerId === '' ? app.provider : `${app.provider} "${app.providerId}"`;
  return new CommandError(`A social app for ${which} already exists${id === undefined ? '' : ` (id ${id})`}.`);
}

/**
 * Refuses an app whose id (its provider_id, else its type) another app already answers to, in the
 * settings or the database, when sign-in could not choose between them (apps.ts's findApp): all
 * but one of them must be marked "hidden".
 */
function refuseAmbiguity(app: ProviderApp, others: readonly ProviderApp[]): void {
  try {
    findApp([...others, app], app.id);
  } catch (error) {
    if (!isLatchkeyError(error, 'configuration_invalid')) throw error;
    throw new CommandError(
      `A social app "${app.id}" already exists (in SOCIALACCOUNT_PROVIDERS or the database), and sign-in could not tell the two apart: `
        + 'remove the other one, or mark all but one "hidden" in their settings.',
    );
  }
}

async function removeApp({ settings, io, args }: CommandContext): Promise<number> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true });
  const [raw, ...extra] = positionals;
  if (raw === undefined || extra.length > 0) throw new CommandError('Usage: socialapp remove <id>');
  const id = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : undefined;
  if (id === undefined) throw new CommandError(`Social app id must be a number, as \`socialapp list\` shows it; got ${JSON.stringify(raw)}.`);
  return withLatchkey(settings, async (latchkey) => {
    const socialApps = latchkey.deps.store.socialApps;
    const app = await socialApps.findById(id);
    if (!app || !(await socialApps.delete(id))) throw new CommandError(`Social app ${id} does not exist.`);
    io.stdout.write(`Social app ${id} (${app.provider}${app.providerId === '' ? '' : ` "${app.providerId}"`}) removed.\n`);
    return 0;
  });
}
