/**
 * Attacks on password reset and change: account enumeration, sessions outliving a change, CSRF,
 * reset keys (reuse, expiry, misdelivery, a poisoned Host, what a reset signs in) and hostile input,
 * on every database.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createUser } from '../../account/users.js';
import { ManualClock } from '../../core/clock.js';
import { LatchkeyError } from '../../core/errors.js';
import { openLatchkey } from '../../latchkey.js';
import { MemoryMailer } from '../../mail/index.js';
import { type EmailMessage } from '../../mail/ports.js';
import type { User } from '../../account/model.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabaseKind } from '../../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another fine passphrase';

/** A mail server that refuses every message, or one that never answers. */
class BrokenMailer extends MemoryMailer {
  attempts: EmailMessage[] = [];
  private readonly stuck: (() => void)[] = [];
  constructor(private readonly mode: 'fail' | 'hang') {
    super({ defaultFrom: 'webmaster@localhost' });
  }
  override send(message: EmailMessage): Promise<void> {
    this.attempts.push(message);
    if (this.mode === 'hang') return new Promise((resolve) => this.stuck.push(resolve));
    return Promise.reject(new LatchkeyError('mail_failed', 'The mail server refused the message.'));
  }
  /** A hung server that finally answers, so that shutdown does not wait for it forever. */
  release(): void {
    for (const resolve of this.stuck.splice(0)) resolve();
  }
}

/** createTestLatchkey, with a mailer of the test's choosing. */
async function latchkeyWithMailer(kind: TestDatabaseKind, mailer: MemoryMailer): Promise<TestLatchkey> {
  const settings = testSettings();
  const database = await createTestDatabase(kind, settings.USERNAME_TYPE);
  const clock = new ManualClock();
  const latchkey = await openLatchkey({ settings, clock, mailer, database, migrations: 'require' });
  return { ...latchkey, clock, mailer, destroy: async () => (await latchkey.close(), await database.destroy()) };
}

/** A response as a person comparing two attempts would see it, minus the per-request CSRF token. */
function comparable(response: { statusCode: number; body: string; headers: Record<string, unknown> }) {
  const { date: _date, 'set-cookie': _cookies, 'content-length': _length, ...headers } = response.headers;
  return { status: response.statusCode, headers, body: response.body.replace(/value="[A-Za-z0-9]{64}"/g, 'value="<csrf>"') };
}

function resetLinkPath(latchkey: TestLatchkey): string {
  const link = /http:\/\/testserver(\/accounts\/password\/reset\/key\/[^\s/]+\/)/.exec(latchkey.mailer.outbox.at(-1)?.text ?? '');
  if (!link) throw new Error('No reset link in the last mail.');
  return link[1]!;
}

describe.each(testDatabaseKinds())('password reset and change under attack on %s', (kind) => {
  const opened: TestLatchkey[] = [];
  const browsers: PageClient[] = [];
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    for (const client of browsers.splice(0)) await client.close();
    for (const instance of opened.splice(0)) await instance.destroy();
  });

  async function open(instance: TestLatchkey, options: { waitForBackground?: boolean } = {}): Promise<[TestLatchkey, PageClient, User]> {
    opened.push(instance);
    const client = await PageClient.create(instance, options);
    browsers.push(client);
    const user = await createUser(instance.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    return [instance, client, user];
  }

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}) {
    [latchkey, browser, ada] = await open(await createTestLatchkey({ kind, ...settings }));
  }

  /** Requests a reset for ada and opens the mailed link: the path of the form, with the key in this browser's session. */
  async function openResetForm(client = browser): Promise<string> {
    await client.post('/accounts/password/reset/', { email: 'ada@example.com' });
    return (await client.get(resetLinkPath(latchkey))).headers.location as string;
  }

  const storedPassword = async () => (await latchkey.deps.store.users.findById(ada.id))!.password;

  it('unknown address, known address and a failing mail server get the same answer; nothing waits for the mail', async () => {
    await setUp();
    const failing = new BrokenMailer('fail');
    const [, failingBrowser] = await open(await latchkeyWithMailer(kind, failing));
    const hanging = new BrokenMailer('hang');
    // This browser does not wait for work left running after an answer: the mail never arrives.
    const [, hangingBrowser] = await open(await latchkeyWithMailer(kind, hanging), { waitForBackground: false });
    const answers = [];
    for (const [client, email] of [[browser, 'nobody@example.com'], [browser, 'ada@example.com'], [failingBrowser, 'ada@example.com'], [hangingBrowser, 'ada@example.com']] as const) {
      const visitor = client.another();
      await visitor.get('/accounts/password/reset/');
      const posted = await visitor.post('/accounts/password/reset/', { email });
      answers.push({ posted: comparable(posted), done: comparable(await visitor.get(posted.headers.location as string)) });
    }
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.posted.status).toBe(302);
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(failing.attempts).toHaveLength(1);
    await vi.waitFor(() => expect(hanging.attempts).toHaveLength(1));
    hanging.release();
  });

  it('a password change rotates this session and the CSRF secret, and ends every other session', async () => {
    await setUp();
    const other = browser.another();
    for (const client of [browser, other]) await client.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const [before, csrfBefore, otherSession] = [browser.cookies.get('sessionid'), browser.cookies.get('csrftoken'), other.cookies.get('sessionid')];
    await browser.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(browser.cookies.get('sessionid')).not.toBe(before);
    expect(browser.cookies.get('csrftoken')).not.toBe(csrfBefore);
    expect(await latchkey.deps.sessions.load(before)).toBeUndefined();
    expect(await latchkey.deps.sessions.load(otherSession)).toBeUndefined();
    expect(await latchkey.deps.sessions.load(browser.cookies.get('sessionid'))).toMatchObject({ userId: ada.id });
    expect((await other.get('/accounts/password/change/')).headers.location).toMatch(/^\/accounts\/login\//);
  });

  it('a reset ends every session of the account and signs nobody in', async () => {
    await setUp();
    const signedIn = browser.another();
    await signedIn.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    const formPath = await openResetForm();
    expect((await browser.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD })).statusCode).toBe(302);
    expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
    expect((await signedIn.get('/accounts/sessions/')).headers.location).toMatch(/^\/accounts\/login\//);
  });

  it('each password form POSTed without a CSRF token is refused with 403 and changes nothing', async () => {
    await setUp();
    const social = await createUser(latchkey.deps, { username: 'social', email: 's@example.com', password: null, emailVerified: true });
    const formPath = await openResetForm();
    latchkey.mailer.clear();
    const noToken = { csrf: false } as const;
    expect((await browser.post('/accounts/password/reset/', { email: 'ada@example.com' }, noToken)).statusCode).toBe(403);
    expect(latchkey.mailer.outbox).toEqual([]);
    expect((await browser.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD }, noToken)).statusCode).toBe(403);
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect((await browser.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD }, noToken)).statusCode).toBe(403);
    expect(await storedPassword()).toBe(ada.password);
    const socialBrowser = browser.another();
    socialBrowser.cookies.set('sessionid', (await latchkey.deps.sessions.create({ userId: social.id })).id);
    expect((await socialBrowser.post('/accounts/password/set/', { password1: NEW_PASSWORD, password2: NEW_PASSWORD }, noToken)).statusCode).toBe(403);
    expect((await latchkey.deps.store.users.findById(social.id))!.password).toBe(social.password);
  });

  it('a key works once, and two parallel submissions of it give exactly one success', async () => {
    await setUp();
    await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    const link = resetLinkPath(latchkey);
    const [first, second] = [browser.another(), browser.another()];
    const paths: string[] = [];
    for (const client of [first, second]) paths.push(String((await client.get(link)).headers.location));
    const answers = await Promise.all(
      [first, second].map((client, i) => client.post(paths[i]!, { password1: `parallel passphrase ${i}`, password2: `parallel passphrase ${i}` })),
    );
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([302, 400]);
    const winner = answers.findIndex((answer) => answer.statusCode === 302);
    expect((await latchkey.deps.passwords.verify(`parallel passphrase ${winner}`, await storedPassword())).valid).toBe(true);
    expect((await browser.another().get(link)).body).toContain('request a new password reset');
    expect((await latchkey.deps.store.auditLog.listForUser(ada.id)).filter((record) => record.event === 'password_reset')).toHaveLength(1);
  });

  it('a key is accepted at ACCOUNT_PASSWORD_RESET_TIMEOUT and refused a second later', async () => {
    await setUp({ settings: { ACCOUNT_PASSWORD_RESET_TIMEOUT: 3600 } });
    await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    const link = resetLinkPath(latchkey);
    latchkey.clock.advance(3600 * 1000);
    const atTtl = browser.another();
    const formPath = (await atTtl.get(link)).headers.location as string;
    expect(formPath).toMatch(/-set-password\/$/);
    latchkey.clock.advance(1000);
    expect((await browser.another().get(link)).body).toContain('request a new password reset');
    // The form opened in time is refused too: the key is checked again when the password is sent.
    expect((await atTtl.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD })).statusCode).toBe(400);
    expect(await storedPassword()).toBe(ada.password);
  });

  it('a key dies after a password change, an email change, or a later login', async () => {
    await setUp();
    const change = [
      async () => {
        const client = browser.another();
        await client.post('/accounts/login/', { login: 'ada', password: PASSWORD });
        await client.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD });
      },
      () => latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'ada@elsewhere.example', verified: true, primary: true }),
      () => browser.another().post('/accounts/login/', { login: 'ada', password: NEW_PASSWORD }),
    ];
    for (const [index, changeAccount] of change.entries()) {
      await browser.another().post('/accounts/password/reset/', { email: 'ada@example.com' });
      const link = resetLinkPath(latchkey);
      latchkey.clock.advance(1000);
      await changeAccount();
      expect((await browser.another().get(link)).body, `change ${index}`).toContain('request a new password reset');
    }
  });

  it('variants reach only the stored address; lists, quoted parts, dotless ı and homoglyph @ are refused', async () => {
    await setUp({ settings: { ACCOUNT_RATE_LIMITS: false } });
    for (const email of ['ADA@EXAMPLE.COM', 'ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ', 'ada\uFF20example.com']) {
      expect((await browser.post('/accounts/password/reset/', { email })).statusCode, email).toBe(302);
    }
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com'], ['ada@example.com'], ['ada@example.com']]);
    latchkey.mailer.clear();
    for (const email of ['ada@example.com,attacker@evil.com', 'ada@example.com attacker@evil.com', '"ada@example.com"@evil.com', 'adı@example.com', 'ada\u2200example.com']) {
      expect((await browser.post('/accounts/password/reset/', { email })).statusCode, email).toBe(400);
    }
    // A dotless ı in the domain is another (punycode) domain, with no account: nothing is sent.
    expect((await browser.post('/accounts/password/reset/', { email: 'ada@exampıe.com' })).statusCode).toBe(302);
    expect(latchkey.mailer.outbox).toEqual([]);
  });

  it('the link uses SITE_URL whatever the Host or X-Forwarded-Host, and reset pages send no Referer off the site', async () => {
    await setUp();
    const poisonedHost = await browser.post('/accounts/password/reset/', { email: 'ada@example.com' }, { headers: { host: 'evil.example' } });
    expect(poisonedHost.statusCode).toBe(400);
    expect(latchkey.mailer.outbox).toEqual([]);
    const forwarded = { headers: { host: 'localhost', 'x-forwarded-host': 'evil.example' } };
    expect((await browser.post('/accounts/password/reset/', { email: 'ada@example.com' }, forwarded)).statusCode).toBe(302);
    const mail = latchkey.mailer.outbox[0]!;
    expect(mail.text).toMatch(/http:\/\/testserver\/accounts\/password\/reset\/key\//);
    expect(`${mail.text}${mail.html}`).not.toContain('evil.example');

    const link = await browser.get(resetLinkPath(latchkey));
    const invalid = await browser.get('/accounts/password/reset/key/1-abc-notakey/');
    // The link only redirects (a redirect's URL is never a Referer), to a form whose URL carries no
    // key; and no Referer leaves the site, while the site's own forms still get their Origin.
    expect(link.statusCode).toBe(302);
    const form = await browser.get(link.headers.location as string);
    expect(form.body).not.toContain(resetLinkPath(latchkey).split('/')[5]);
    for (const response of [link, invalid, form, await browser.get('/accounts/password/reset/'), await browser.get('/accounts/password/reset/done/'), await browser.get('/accounts/password/reset/key/done/')]) {
      expect(response.headers['referrer-policy']).toBe('same-origin');
    }
  });

  it('after a reset the owner is notified, and nobody is signed in', async () => {
    await setUp();
    const formPath = await openResetForm();
    latchkey.mailer.clear();
    await browser.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD });
    expect(latchkey.mailer.outbox.map((mail) => [mail.to, mail.subject])).toEqual([[['ada@example.com'], '[Test Site] Your password has been reset']]);
    expect(latchkey.mailer.outbox[0]!.text).toContain('http://testserver/accounts/password/reset/');
    expect((await browser.get('/accounts/password/change/')).headers.location).toMatch(/^\/accounts\/login\//);
    expect(await latchkey.deps.sessions.listForUser(ada.id)).toEqual([]);
  });

  it('a 1 MB or over-limit password is refused fast and never hashed; 64+ characters work', async () => {
    await setUp();
    const formPath = await openResetForm();
    const huge = 'x'.repeat(1024 * 1024);
    const tooLong = 'x'.repeat(5000);
    const before = latchkey.deps.passwords.stats().completed;
    expect((await browser.post(formPath, { password1: huge, password2: huge })).statusCode).toBe(413);
    const overLimit = await browser.post(formPath, { password1: tooLong, password2: tooLong });
    expect(overLimit.statusCode).toBe(400);
    expect(overLimit.body).toContain('This password is too long');
    expect(latchkey.deps.passwords.stats().completed).toBe(before);

    const long = 'correct horse battery staple '.repeat(4);
    expect((await browser.post(formPath, { password1: long, password2: long })).statusCode).toBe(302);
    const client = browser.another();
    expect((await client.post('/accounts/login/', { login: 'ada', password: long })).statusCode).toBe(302);
    const beforeChange = latchkey.deps.passwords.stats().completed;
    const refused = await client.post('/accounts/password/change/', { oldpassword: long, password1: tooLong, password2: tooLong });
    expect(refused.statusCode).toBe(400);
    expect(latchkey.deps.passwords.stats().completed).toBe(beforeChange);
    const longer = `${long}and more`;
    expect((await client.post('/accounts/password/change/', { oldpassword: long, password1: longer, password2: longer })).statusCode).toBe(302);

    // NUL bytes (which PostgreSQL refuses in text) fail like any other bad input, never with a 500.
    expect((await client.post('/accounts/password/reset/', { email: 'ada\u0000@example.com' })).statusCode).toBe(400);
    expect((await client.get('/accounts/password/reset/key/1-abc-%00/')).statusCode).toBe(200);
    expect((await client.post('/accounts/reauthenticate/', { password: 'nul\u0000byte' })).statusCode).toBe(400);
  });
});
