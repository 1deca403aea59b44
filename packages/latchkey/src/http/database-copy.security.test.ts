/**
 * A copy of the database (a backup, a replica, a dump) read by someone who should not have it, on
 * every database: after journeys that leave secrets waiting (a password-reset link opened, a
 * login stopped at its second factor, an authenticator app being set up, a provider sign-in and a
 * SAML sign-in started, sign-in codes mailed, a mail waiting for the mail server), every table is
 * dumped and searched for what would let the reader in: the reset key, the codes, the TOTP
 * secrets, the recovery codes, the states and request ids, the session ids and tokens, the API
 * token. None may be there in plain text (docs/security.md, "What is stored, and how").
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import type { LatchkeyDeps } from '../deps.js';
import { testDatabaseKinds, type TestDatabaseKind } from '../testing/database.js';
import { answerDummyPage, dummyProviders, startDummySignIn } from '../testing/dummy-sign-in.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor } from '../testing/mfa.js';
import { PageClient } from '../testing/pages.js';
import { startTestSamlIdp, type TestSamlIdp } from '../testing/saml-idp.js';
import { samlApp, startSignIn } from '../testing/saml-sign-in.js';
import { issueApiToken } from '../tokens/api-tokens.js';

const PASSWORD = 'a long enough passphrase';
const CLIENT = { ip: '127.0.0.1', userAgent: 'test' };

let idp: TestSamlIdp;
beforeAll(async () => {
  idp = await startTestSamlIdp();
});
afterAll(() => idp.close());

/** Every row of every table, as one text: what a reader of the copy has. */
async function dumpEveryTable(kind: TestDatabaseKind, db: Kysely<unknown>): Promise<string> {
  const tables =
    kind === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
  const dumped: Record<string, unknown[]> = {};
  for (const { name } of tables.rows) dumped[name] = (await sql`select * from ${sql.table(name)}`.execute(db)).rows;
  expect(Object.keys(dumped)).toEqual(expect.arrayContaining(['latchkey_sessions', 'latchkey_mail_outbox', 'latchkey_authenticators', 'latchkey_api_tokens']));
  return JSON.stringify(dumped);
}

/** The six-character code in the latest mail to `to`. */
function mailedCode(latchkey: TestLatchkey, to: string): string {
  const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo(to)?.text ?? '')?.[1];
  if (code === undefined) throw new Error(`no code was mailed to ${to}`);
  return code;
}

/** The path of the reset link in the latest mail to `to`, and its key. */
function mailedResetLink(latchkey: TestLatchkey, to: string): { path: string; key: string } {
  const match = /(\/accounts\/password\/reset\/key\/([^/\s]+)\/)/.exec(latchkey.mailer.lastTo(to)?.text ?? '');
  if (match === null) throw new Error(`no reset link was mailed to ${to}`);
  return { path: match[1]!, key: decodeURIComponent(match[2]!) };
}

/** The secret the authenticator-app setup page shows. */
function secretOnPage(body: string): string {
  const match = /id="mfa-totp-secret">([A-Z2-7]+)</.exec(body);
  if (match === null) throw new Error('no secret on the page');
  return match[1]!;
}

describe.each(testDatabaseKinds())('a copy of the database on %s', (kind) => {
  let latchkey: TestLatchkey;
  const clients: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const client of clients) await client.close();
    await latchkey?.destroy();
  });

  it('holds no reset key, code, secret, state, request id, session id or token that works on its own', async () => {
    latchkey = await createTestLatchkey({
      kind,
      settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true, SOCIALACCOUNT_PROVIDERS: { ...dummyProviders(), ...samlApp(idp) } },
    });
    const deps: LatchkeyDeps = latchkey.deps;
    const site = await PageClient.create(latchkey, { plugin: { headless: true } });
    clients.push(site);
    const ada = await createUser(deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const adaTotp = await activateTotpFor(latchkey, ada);
    const bob = await createUser(deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const eve = await createUser(deps, { username: 'eve', email: 'eve@example.com', password: PASSWORD, emailVerified: true });
    const secrets: Record<string, string> = {};

    // A password-reset link opened: the key waits in the session for the new password.
    const resetting = site.another();
    expect((await resetting.post('/accounts/password/reset/', { email: 'eve@example.com' })).statusCode).toBe(302);
    const link = mailedResetLink(latchkey, 'eve@example.com');
    expect((await resetting.get(link.path)).statusCode).toBe(302);
    secrets['reset key'] = link.key;

    // A login stopped at its second factor.
    const stopped = site.another();
    expect((await stopped.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe('/accounts/2fa/authenticate/');
    secrets['ada’s TOTP secret'] = adaTotp.secret;
    secrets['ada’s recovery code'] = adaTotp.recoveryCodes[0]!;

    // An authenticator app being set up: its secret waits in the session for the first code.
    const settingUp = site.another();
    expect((await settingUp.post('/accounts/login/', { login: 'bob', password: PASSWORD })).statusCode).toBe(302);
    secrets['bob’s pending TOTP secret'] = secretOnPage((await settingUp.get('/accounts/2fa/totp/activate/')).body);

    // A provider sign-in started, and a SAML sign-in started: their states wait in the sessions.
    const provider = site.another();
    const dummyPage = await startDummySignIn(provider);
    secrets['provider state'] = dummyPage.searchParams.get('state')!;
    // Answered but not yet brought back: the callback URL's state is the same one.
    expect(new URL(await answerDummyPage(provider, dummyPage, { id: 'dummy-1' })).searchParams.get('state')).toBe(secrets['provider state']);
    const saml = site.another();
    const samlStarted = await startSignIn(saml);
    secrets['SAML request id'] = samlStarted.requestId;

    // Sign-in codes mailed, to a browser and to an app.
    const byCode = site.another();
    expect((await byCode.post('/accounts/login/code/', { email: 'bob@example.com' })).statusCode).toBe(302);
    secrets['login code (pages)'] = mailedCode(latchkey, 'bob@example.com');
    const app = new HeadlessTestClient(site.app, 'app', latchkey);
    expect((await app.post('/auth/code/request', { email: 'eve@example.com' })).status).toBe(401);
    secrets['login code (app)'] = mailedCode(latchkey, 'eve@example.com');
    secrets['app session token'] = app.sessionToken!;
    const signedInApp = new HeadlessTestClient(site.app, 'app', latchkey);
    expect((await signedInApp.post('/auth/login', { username: 'bob', password: PASSWORD })).status).toBe(200);
    secrets['signed-in app session token'] = signedInApp.sessionToken!;

    // An API token.
    secrets['API token'] = await issueApiToken(deps, bob, CLIENT);

    // A signup while the mail server is down: its confirmation link waits in the outbox.
    const send = latchkey.mailer.send.bind(latchkey.mailer);
    latchkey.mailer.send = () => Promise.reject(new Error('The mail server is down.'));
    const signup = { username: 'dee', email: 'dee@example.com', password1: PASSWORD, password2: PASSWORD };
    expect((await site.another().post('/accounts/signup/', signup)).statusCode).toBe(302);
    expect(await deps.store.mailOutbox.list()).toEqual([expect.objectContaining({ recipients: ['dee@example.com'], attempts: 1 })]);

    // Every browser's session id and CSRF token.
    for (const [name, browser] of Object.entries({ resetting, stopped, settingUp, provider, saml, byCode })) {
      secrets[`${name}’s session id`] = browser.cookies.get('sessionid')!;
      secrets[`${name}’s CSRF token`] = browser.cookies.get('csrftoken')!;
    }

    const dump = await dumpEveryTable(kind, latchkey.database.kysely as Kysely<unknown>);
    latchkey.mailer.send = send;

    // Those that can still be used work for their owners: the copy lacks them, not the site.
    const finished = await resetting.post(`/accounts/password/reset/key/${eve.id.toString(36)}-set-password/`, { password1: 'a brand new passphrase', password2: 'a brand new passphrase' });
    expect(finished.headers.location).toBe('/accounts/password/reset/key/done/');
    expect((await stopped.post('/accounts/2fa/authenticate/', { code: adaTotp.code() })).statusCode).toBe(302);
    expect((await app.post('/auth/code/confirm', { code: secrets['login code (app)'] })).status).toBe(200);

    // The mail server is back: the waiting mail goes out, with a key the copy never held.
    latchkey.clock.advance(10 * 60_000);
    expect(await deps.mailOutbox.sweep()).toBe(1);
    const confirmation = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(latchkey.mailer.lastTo('dee@example.com')?.text ?? '');
    secrets['confirmation key waiting in the outbox'] = decodeURIComponent(confirmation![1]!);

    for (const [what, secret] of Object.entries(secrets)) {
      expect(secret, what).toMatch(/.{6,}/);
      for (const form of new Set([secret, secret.toLowerCase(), encodeURIComponent(secret)])) expect(dump.includes(form), `${what} is in the copy`).toBe(false);
    }
  });
});
