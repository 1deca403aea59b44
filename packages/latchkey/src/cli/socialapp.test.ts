import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettings, type ProjectSettings } from '../config/load.js';
import type { ManagementOptions } from './index.js';
import { decryptSecret } from '../core/encryption.js';
import { STORABLE_KIND_IDS } from '../socialaccount/directory.js';
import { oauth2ProviderKind } from '../socialaccount/providers/oauth2.js';
import { createTestDatabase, testDatabaseKinds, testPostgresUrl, type TestDatabase } from '../testing/database.js';
import { createTestKeyPair } from '../testing/saml-keys.js';
import { runAsPerson } from '../testing/terminal.js';

const project: ProjectSettings = { USERNAME_TYPE: 'username', SITE_NAME: 'CLI Test', DOMAIN_NAME: 'cli.example' };
const SECRET = 'sup3r-s3cret-client-value';
const SETTINGS_SECRET = 'settings-app-s3cret-value';
/** A provider kind of the project's own, as its app gives createLatchkey and its manage script gives the commands. */
const hubKind = oauth2ProviderKind({
  type: 'hub',
  name: 'Hub',
  authorizeUrl: 'https://hub.example/login/oauth/authorize',
  accessTokenUrl: 'https://hub.example/login/oauth/access_token',
  profileUrl: 'https://api.hub.example/user',
  defaultScope: ['read:user'],
  profile: (json) => ({ uid: json.id, emails: [], data: {} }),
});
const corp = ['--provider', 'openid_connect', '--provider-id', 'corp', '--name', 'Corp SSO', '--client-id', 'abc', '--server-url', 'https://id.corp.example'];

describe.each(testDatabaseKinds())('manage socialapp on %s', (kind) => {
  let database: TestDatabase;
  let databaseUrl: string;
  let cwd: string;
  /** Everything every command wrote, to make sure no secret ever appears in it. */
  let written: string[];

  beforeEach(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'lk-socialapp-'));
    database = await createTestDatabase(kind, 'username', { sqliteFile: true });
    const schema = database.openOptions.postgresSchema;
    databaseUrl = kind === 'postgres' ? `${testPostgresUrl()!}?options=${encodeURIComponent(`-c search_path=${schema!}`)}` : database.openOptions.url;
    written = [];
  });

  afterEach(async () => {
    await database.destroy();
    for (const text of written) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(SETTINGS_SECRET);
    }
  });

  /** Runs a command as a person would, typing `answers` at its prompts (on a terminal when `tty`). */
  async function manage(argv: string[], options: { env?: Record<string, string>; answers?: string[]; tty?: boolean; options?: ManagementOptions } = {}) {
    const { code, out, err } = await runAsPerson(argv, project, {
      ...options,
      cwd,
      env: { NODE_ENV: 'local', DATABASE_URL: databaseUrl, EMAIL_URL: 'memory:', ...options.env },
    });
    written.push(out, err);
    return { code, out, err };
  }

  /** Adds the Corp app, its secret typed at the prompt. */
  function addCorp(extra: string[] = []) {
    return manage(['socialapp', 'add', ...corp, ...extra], { tty: true, answers: [SECRET] });
  }

  const rows = () => database.store.socialApps.list();

  /** The secret key the commands used (local mode keeps it in the working directory). */
  const secretKey = () => loadSettings(project, { env: { NODE_ENV: 'local', DATABASE_URL: databaseUrl, EMAIL_URL: 'memory:' }, cwd }).SECRET_KEY;

  it('adds an app with the secret typed at the prompt, stores the secret sealed, and lists the app without it', async () => {
    const added = await addCorp(['--settings', '{"scope":["openid","email"]}']);
    expect(added).toMatchObject({ code: 0, err: '' });
    expect(added.out).toMatch(/^Client secret: \nSocial app added with id \d+\.\n$/);
    const [row, ...others] = await rows();
    expect(others).toEqual([]);
    expect(added.out).toContain(`id ${row!.id}.`);
    expect(row).toMatchObject({ provider: 'openid_connect', providerId: 'corp', name: 'Corp SSO', clientId: 'abc', key: '', settings: { scope: ['openid', 'email'], server_url: 'https://id.corp.example' } });
    // Sealed: not the secret, not containing it, and opening (under the same secret key, bound to this app) to it.
    expect(row!.sealedSecret).not.toBe('');
    expect(row!.sealedSecret).not.toContain(SECRET);
    const opened = decryptSecret(secretKey(), 'social-app-secret', row!.sealedSecret, 'social-app:openid_connect:corp');
    expect(opened && Buffer.from(opened).toString('utf8')).toBe(SECRET);
    expect(decryptSecret(secretKey(), 'social-app-secret', row!.sealedSecret, 'social-app:openid_connect:other')).toBeUndefined();

    const listed = await manage(['socialapp', 'list']);
    expect(listed).toEqual({
      code: 0,
      err: '',
      out: `id ${row!.id}: provider openid_connect, provider_id corp, name "Corp SSO", client_id "abc", secret: set\n`,
    });
  });

  it('takes the secret from LATCHKEY_SOCIALAPP_SECRET with --noinput, without asking', async () => {
    const added = await manage(['socialapp', 'add', ...corp, '--noinput'], { env: { LATCHKEY_SOCIALAPP_SECRET: SECRET } });
    expect(added).toMatchObject({ code: 0, err: '' });
    expect(added.out).toMatch(/^Social app added with id \d+\.\n$/);
    const [row] = await rows();
    const opened = decryptSecret(secretKey(), 'social-app-secret', row!.sealedSecret, 'social-app:openid_connect:corp');
    expect(opened && Buffer.from(opened).toString('utf8')).toBe(SECRET);
  });

  it("adds a SAML app whose service provider's private key is its secret, sealed, and refuses a key that is not its certificate's", async () => {
    const sp = createTestKeyPair('sp.cli.example');
    const settings = { idp: { entity_id: 'https://idp.acme.example/saml', metadata_url: 'https://idp.acme.example/saml/metadata' }, advanced: { x509cert: sp.certificate, authn_request_signed: true } };
    const saml = ['socialapp', 'add', '--noinput', '--provider', 'saml', '--provider-id', 'https://idp.acme.example/saml', '--name', 'Acme', '--client-id', 'acme', '--settings', JSON.stringify(settings)];
    const stranger = createTestKeyPair('someone else');
    const refused = await manage(saml, { env: { LATCHKEY_SOCIALAPP_SECRET: stranger.privateKey } });
    expect(refused).toEqual({ code: 1, out: '', err: 'Error: secret is not the private key of advanced.x509cert.\n' });
    expect(await rows()).toEqual([]);

    expect(await manage(saml, { env: { LATCHKEY_SOCIALAPP_SECRET: sp.privateKey } })).toMatchObject({ code: 0, err: '' });
    const [row] = await rows();
    expect(row).toMatchObject({ provider: 'saml', providerId: 'https://idp.acme.example/saml', clientId: 'acme', settings });
    expect(JSON.stringify(row)).not.toContain('PRIVATE KEY');
    const opened = decryptSecret(secretKey(), 'social-app-secret', row!.sealedSecret, 'social-app:saml:https://idp.acme.example/saml');
    expect(opened && Buffer.from(opened).toString('utf8')).toBe(sp.privateKey);
  });

  it('lists the apps of the settings too, marked and without their secrets, and says when there are none', async () => {
    expect(await manage(['socialapp', 'list'])).toEqual({ code: 0, err: '', out: 'No social apps: none in the database, none in SOCIALACCOUNT_PROVIDERS.\n' });
    const providers = JSON.stringify({ openid_connect: { APPS: [{ provider_id: 'okta', name: 'Okta', client_id: 'okta-client', secret: SETTINGS_SECRET, settings: { server_url: 'https://okta.example' } }] } });
    const env = { LATCHKEY_SOCIALACCOUNT_PROVIDERS: providers };
    const listed = await manage(['socialapp', 'list'], { env });
    expect(listed).toEqual({
      code: 0,
      err: '',
      out: 'from the settings (SOCIALACCOUNT_PROVIDERS): provider openid_connect, provider_id okta, name "Okta", client_id "okta-client", secret: set\n',
    });
    expect((await manage(['socialapp', 'add', ...corp, '--no-secret'], { env })).code).toBe(0);
    const both = await manage(['socialapp', 'list'], { env });
    expect(both.out.split('\n')).toEqual([
      expect.stringMatching(/^id \d+: provider openid_connect, provider_id corp, name "Corp SSO", client_id "abc", secret: none$/) as unknown,
      expect.stringMatching(/^from the settings \(SOCIALACCOUNT_PROVIDERS\): .*provider_id okta/) as unknown,
      '',
    ]);
  });

  it('refuses a secret on the command line, in any spelling, storing nothing and never echoing it', async () => {
    for (const args of [['--secret', SECRET], [`--secret=${SECRET}`], ['--client-secret', SECRET], [`--SECRET=${SECRET}`]]) {
      const result = await manage(['socialapp', 'add', ...corp, ...args], { tty: true, answers: ['typed-secret'] });
      expect(result.code).toBe(1);
      expect(result.out).toBe('');
      expect(result.err).toMatch(/^Error: --(client-)?secret is not accepted: a secret on the command line is visible to every user in `ps` and stays in the shell's history\. Set LATCHKEY_SOCIALAPP_SECRET/i);
      expect(result.err.trim().split('\n')).toHaveLength(1);
    }
    expect(await rows()).toEqual([]);
  });

  it('with --noinput and no LATCHKEY_SOCIALAPP_SECRET, refuses; --no-secret stores a public client without one', async () => {
    const refused = await manage(['socialapp', 'add', ...corp, '--noinput']);
    expect(refused).toEqual({
      code: 1,
      out: '',
      err: 'Error: A client secret is required: with --noinput, set LATCHKEY_SOCIALAPP_SECRET (or give --no-secret for a public client, which has none).\n',
    });
    const empty = await manage(['socialapp', 'add', ...corp], { tty: true, answers: [''] });
    expect(empty).toMatchObject({ code: 1, err: 'Error: No client secret was typed: give --no-secret for a public client, which has none.\n' });
    expect(await rows()).toEqual([]);
    expect(await manage(['socialapp', 'add', ...corp, '--no-secret', '--noinput'])).toMatchObject({ code: 0, err: '' });
    expect(await rows()).toEqual([expect.objectContaining({ providerId: 'corp', sealedSecret: '' })]);
  });

  it('checks the app as a settings entry, and its server_url, before asking for the secret, storing nothing', async () => {
    const withoutOption = (name: string) => {
      const at = corp.indexOf(name);
      return [...corp.slice(0, at), ...corp.slice(at + 2)];
    };
    const replaced = (name: string, value: string) => corp.map((arg, index) => (corp[index - 1] === name ? value : arg));
    const cases: Array<[string[], string]> = [
      [replaced('--provider-id', '../x'), 'Error: --provider-id: letters, digits, "-", "_" and ".", starting with a letter or digit.\n'],
      [withoutOption('--provider-id'), 'Error: a provider_id is required for openid_connect (it names the app in its URLs).\n'],
      [withoutOption('--client-id'), 'Error: --client-id: a client_id is required.\n'],
      [replaced('--server-url', 'http://id.corp.example'), 'Error: server_url "http://id.corp.example" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only).\n'],
      [replaced('--server-url', 'not a url'), 'Error: server_url "not a url" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only).\n'],
      [withoutOption('--server-url'), "Error: --server-url is required for openid_connect (the identity provider's issuer URL).\n"],
      [replaced('--provider', 'openid-connect'), `Error: Unknown provider "openid-connect": Latchkey signs in with ${STORABLE_KIND_IDS.join(', ')}.\n`],
      [withoutOption('--provider'), `Error: --provider is required (${STORABLE_KIND_IDS.join(', ')}).\n`],
      [[...corp, '--settings', '["openid"]'], `Error: --settings must be a JSON object, such as '{"scope":["openid","email"]}'.\n`],
      [[...corp, '--settings', '{"server_url":"https://elsewhere.example"}'], 'Error: --server-url and the server_url of --settings differ: give one.\n'],
    ];
    for (const [args, err] of cases) {
      expect(await manage(['socialapp', 'add', ...args], { tty: true, answers: [SECRET] }), args.join(' ')).toEqual({ code: 1, out: '', err });
    }
    expect(await rows()).toEqual([]);
    // Plain http is for a provider on this machine (a test identity provider) only.
    expect(await addCorp()).toMatchObject({ code: 0 });
    const local = await manage(['socialapp', 'add', ...replaced('--provider-id', 'local').map((arg) => (arg === 'https://id.corp.example' ? 'http://127.0.0.1:8080/realms/dev' : arg))], {
      tty: true,
      answers: [SECRET],
    });
    expect(local).toMatchObject({ code: 0, err: '' });
    expect((await rows()).map((row) => row.settings.server_url)).toEqual(['https://id.corp.example', 'http://127.0.0.1:8080/realms/dev']);
  });

  it('refuses a duplicate app, in the database or in the settings, with one error line', async () => {
    expect((await addCorp()).code).toBe(0);
    const [first] = await rows();
    const again = await manage(['socialapp', 'add', ...corp.map((arg) => (arg === 'abc' ? 'other-client' : arg))], { tty: true, answers: [SECRET] });
    expect(again).toEqual({ code: 1, out: '', err: `Error: A social app for openid_connect "corp" already exists (id ${first!.id}).\n` });
    expect(await rows()).toHaveLength(1);

    // An app of the settings with the same provider_id: sign-in could not tell the two apart.
    const env = { LATCHKEY_SOCIALACCOUNT_PROVIDERS: JSON.stringify({ openid_connect: { APPS: [{ provider_id: 'okta', client_id: 'x', secret: SETTINGS_SECRET, settings: { server_url: 'https://okta.example' } }] } }) };
    const clash = await manage(['socialapp', 'add', ...corp.map((arg) => (arg === 'corp' ? 'okta' : arg)), '--no-secret'], { env });
    expect(clash.code).toBe(1);
    expect(clash.err).toMatch(/^Error: A social app "okta" already exists \(in SOCIALACCOUNT_PROVIDERS or the database\)/);
    // Unless all but one are hidden (a token-only app, as allauth allows).
    const hidden = await manage(['socialapp', 'add', ...corp.map((arg) => (arg === 'corp' ? 'okta' : arg)), '--no-secret', '--settings', '{"hidden":true}'], { env });
    expect(hidden).toMatchObject({ code: 0, err: '' });
    expect((await rows()).map((row) => row.providerId)).toEqual(['corp', 'okta']);
  });

  it('removes an app by id, and refuses an unknown or malformed id', async () => {
    expect((await addCorp()).code).toBe(0);
    const [row] = await rows();
    expect(await manage(['socialapp', 'remove', String(row!.id)])).toEqual({ code: 0, err: '', out: `Social app ${row!.id} (openid_connect "corp") removed.\n` });
    expect(await rows()).toEqual([]);
    expect(await manage(['socialapp', 'remove', String(row!.id)])).toEqual({ code: 1, out: '', err: `Error: Social app ${row!.id} does not exist.\n` });
    expect(await manage(['socialapp', 'remove', 'corp'])).toEqual({ code: 1, out: '', err: 'Error: Social app id must be a number, as `socialapp list` shows it; got "corp".\n' });
    expect(await manage(['socialapp', 'remove'])).toEqual({ code: 1, out: '', err: 'Error: socialapp remove needs <id>. Run "socialapp remove --help" for its usage.\n' });
    expect((await manage(['socialapp', 'frobnicate'])).err).toBe('Error: Unknown action "frobnicate" of socialapp (list, add, remove). Run "socialapp --help" for its usage.\n');
  });

  it("knows the provider kinds of the project's own that its manage script passes, as the site does", async () => {
    const env = { LATCHKEY_SOCIALACCOUNT_PROVIDERS: JSON.stringify({ hub: { APPS: [{ name: 'Hub', client_id: 'hub-client', secret: SETTINGS_SECRET }] } }) };
    const unaware = await manage(['check'], { env });
    expect(unaware.code).toBe(1);
    expect(unaware.err).toMatch(/hub/);

    const options = { socialProviderKinds: [hubKind] };
    expect(await manage(['check'], { env, options })).toMatchObject({ code: 0, err: '' });
    const added = await manage(['socialapp', 'add', '--provider', 'hub', '--provider-id', 'hub-two', '--name', 'Hub Two', '--client-id', 'two', '--no-secret'], { env, options });
    expect(added).toMatchObject({ code: 0, err: '' });
    const listed = await manage(['socialapp', 'list'], { env, options });
    expect(listed.out).toMatch(/^id \d+: provider hub, provider_id hub-two, name "Hub Two", client_id "two", secret: none\nfrom the settings \(SOCIALACCOUNT_PROVIDERS\): provider hub, .*client_id "hub-client", secret: set\n$/);
  });
});
