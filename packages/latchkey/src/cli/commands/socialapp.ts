// `manage socialapp list|add|remove`: configures social sign-in apps in the database without the
// admin (allauth keeps them in SocialApp rows); the work is in socialapp.run.ts. An app's client
// secret is read from LATCHKEY_SOCIALAPP_SECRET or typed at a prompt, never taken from the command
// line, where `ps` and the shell's history would show it.
import { runFrom, type Command, type CommandGroup } from '../declaration.js';
import { CommandError } from '../io.js';
import { SOCIALAPP_SECRET_VARIABLE } from './shared-names.js';

const list: Command = {
  summary: 'list the apps, in the database and in SOCIALACCOUNT_PROVIDERS',
  description: 'Lists the social apps, one line each: those in the database with their ids, then those of SOCIALACCOUNT_PROVIDERS. A secret is never printed, only whether the app has one.',
  run: runFrom(() => import('./socialapp.run.js').then((work) => ({ run: work.listAllApps }))),
};

const add: Command = {
  summary: 'add an app to the database',
  description: `Adds a social app to the database, checked by the rules of a SOCIALACCOUNT_PROVIDERS entry before its client secret is asked for. The secret is read from ${SOCIALAPP_SECRET_VARIABLE}, or typed at the prompt (not shown), never taken from the command line; it is stored encrypted under the secret key. Prints the new app's id.`,
  options: {
    provider: { type: 'string', value: 'P', help: 'the provider type (required): openid_connect, saml, or a named provider such as github or google' },
    'provider-id': { type: 'string', value: 'ID', help: "the app's name in its accounts' records and, for openid_connect, in its URLs (required); for saml, the IdP's entity id" },
    name: { type: 'string', value: 'N', help: "the login button's label (default: the provider id)" },
    'client-id': { type: 'string', value: 'C', help: 'the client id the identity provider gave; for saml, the organisation slug in its URLs (required)' },
    'server-url': { type: 'string', value: 'URL', help: "the identity provider's issuer, stored as the app's server_url (required for openid_connect)" },
    key: { type: 'string', value: 'K', help: 'the second key a few providers need; not a secret' },
    settings: { type: 'string', value: 'JSON', help: `the app's other settings, a JSON object such as '{"scope":["openid","email"]}'` },
    noinput: { type: 'boolean', help: `never prompt: the secret must then come from ${SOCIALAPP_SECRET_VARIABLE}` },
    'no-secret': { type: 'boolean', help: 'a public client, which has no secret (a saml app without a key pair of its own)' },
  },
  environment: { [SOCIALAPP_SECRET_VARIABLE]: "the client secret (for saml, the service provider's private key, PEM)" },
  run: runFrom(() => import('./socialapp.run.js').then((work) => ({ run: work.addApp }))),
};

const remove: Command = {
  summary: 'remove an app from the database',
  description: 'Removes a social app from the database. People who signed in with it keep their accounts, but cannot sign in with it until an app with its provider id is configured again. Apps of SOCIALACCOUNT_PROVIDERS are removed from the settings, not here.',
  arguments: [{ name: 'id', help: 'the id `socialapp list` shows' }],
  run: runFrom(() => import('./socialapp.run.js').then((work) => ({ run: work.removeApp }))),
};

export const socialapp: CommandGroup = {
  summary: 'list, add or remove social sign-in apps in the database',
  description:
    'Configures the social sign-in apps kept in the database, beside those of SOCIALACCOUNT_PROVIDERS, without the admin. An app added works at once: no restart is needed. A client secret is never taken from the command line.',
  actions: { list, add, remove },
  screen: refuseSecretOnCommandLine,
};

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
