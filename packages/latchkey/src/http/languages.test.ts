/**
 * The request's language (docs/translations.md): the language switch (POST /i18n/setlang/),
 * Accept-Language, the choice stored on the account, `<html lang dir>`, mails in the recipient's
 * language (also when the outbox sends them after a restart), and the headless API's messages.
 * Expected texts come from the shipped catalogs, and each is checked to differ from the English,
 * so a missing translation fails here as well as in the completeness test.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createUser } from '../account/users.js';
import type { Translator } from '../core/i18n/catalogs.js';
import { openDatabase } from '../storage/database.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../testing/database.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

/** `id` in the language, having checked that the language translates it. */
function translated(translator: Translator, id: string): string {
  const text = translator.gettext(id);
  expect(text, `${translator.language} translates "${id}"`).not.toBe(id);
  return text;
}

describe.each(testDatabaseKinds())('languages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
  });

  async function open(settings = {}) {
    latchkey = await createTestLatchkey({ kind, settings });
    browser = await PageClient.create(latchkey);
  }

  const htmlTag = (body: string) => /<html[^>]*>/.exec(body)?.[0];

  it('answers in the Accept-Language it offers, with lang and dir, and LANGUAGE_CODE otherwise', async () => {
    await open();
    const arabic = await browser.get('/accounts/login/', { 'accept-language': 'ar-EG,ar;q=0.9,en;q=0.5' });
    expect(htmlTag(arabic.body)).toBe('<html lang="ar" dir="rtl">');
    expect(arabic.headers['content-language']).toBe('ar');
    expect(arabic.body).toContain(translated(latchkey.deps.catalogs.translator('ar'), 'Sign in'));
    const italian = await browser.get('/accounts/login/', { 'accept-language': 'it-IT, it;q=0.9' });
    expect(htmlTag(italian.body)).toBe('<html lang="en" dir="ltr">');
    await browser.close();
    await latchkey.destroy();
    await open({ LANGUAGE_CODE: 'pt-br' });
    expect(htmlTag((await browser.get('/accounts/login/')).body)).toBe('<html lang="pt-br" dir="ltr">');
  });

  it('switches language with the form on every page, as set_language: cookie, CSRF, a safe next', async () => {
    await open();
    const page = await browser.get('/accounts/login/', { 'accept-language': 'en' });
    expect(page.body).toContain('action="/i18n/setlang/"');
    expect(page.body).toContain('<option value="ja" lang="ja">日本語</option>');
    const switched = await browser.post('/i18n/setlang/', { language: 'ja', next: '/accounts/password/reset/' });
    expect(switched.statusCode).toBe(302);
    expect(switched.headers.location).toBe('/accounts/password/reset/');
    expect(browser.cookies.get('django_language')).toBe('ja');
    // The choice beats the browser's own language from now on.
    const reset = await browser.get('/accounts/password/reset/', { 'accept-language': 'en' });
    expect(htmlTag(reset.body)).toBe('<html lang="ja" dir="ltr">');
    expect(reset.body).toContain('<option value="ja" lang="ja" selected>日本語</option>');

    expect((await browser.post('/i18n/setlang/', { language: 'xx', next: 'https://evil.example/' })).headers.location).toBe('/');
    expect(browser.cookies.get('django_language')).toBe('ja');
    expect((await browser.post('/i18n/setlang/', { language: 'fr', next: '/' }, { csrf: false })).statusCode).toBe(403);
    expect(browser.cookies.get('django_language')).toBe('ja');
  });

  it("keeps a signed-in person's choice on the account: their pages on another browser, and their mails", async () => {
    await open();
    await createUser(latchkey.deps, { username: 'greta', email: 'greta@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/login/', { login: 'greta', password: PASSWORD });
    await browser.post('/i18n/setlang/', { language: 'de', next: '/accounts/email/' });
    expect((await latchkey.deps.store.users.findByUsername('greta'))?.language).toBe('de');

    const english = browser.another();
    await english.post('/accounts/login/', { login: 'greta', password: PASSWORD }, { headers: { 'accept-language': 'en-US' } });
    expect(htmlTag((await english.get('/accounts/email/', { 'accept-language': 'en-US' })).body)).toBe('<html lang="de" dir="ltr">');

    // Asked for by a stranger's browser set to English: the reset mail is in German all the same.
    const stranger = browser.another();
    await stranger.post('/accounts/password/reset/', { email: 'greta@example.com' }, { headers: { 'accept-language': 'en-US' } });
    const german = latchkey.deps.catalogs.translator('de');
    expect(latchkey.mailer.lastTo('greta@example.com')?.subject).toBe(`[Test Site] ${translated(german, 'Password reset')}`);
  });

  it('writes a French signup\'s verification mail in French', async () => {
    await open({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
    await browser.get('/accounts/signup/', { 'accept-language': 'fr-FR,fr;q=0.9' });
    await browser.post('/accounts/signup/', { email: 'amelie@example.com', username: 'amelie', password1: PASSWORD, password2: PASSWORD }, { headers: { 'accept-language': 'fr-FR,fr;q=0.9' } });
    const french = latchkey.deps.catalogs.translator('fr');
    const mail = latchkey.mailer.lastTo('amelie@example.com');
    expect(mail?.subject).toBe(`[Test Site] ${translated(french, 'Please confirm your email address')}`);
    expect(mail?.text).not.toContain('Hello');
  });

  it('answers a headless refusal in Japanese with the same code and param, within the contract', async () => {
    await open();
    await createUser(latchkey.deps, { username: 'kenji', email: 'kenji@example.com', password: PASSWORD, emailVerified: true });
    const app = await HeadlessTestClient.createApp(latchkey);
    const client = new HeadlessTestClient(app, 'app', latchkey);
    const english = await client.post('/auth/login', { username: 'kenji', password: 'not the password' });
    const japanese = await client.post('/auth/login', { username: 'kenji', password: 'not the password' }, { headers: { 'accept-language': 'ja-JP,ja;q=0.9' } });
    expect(japanese.status).toBe(400);
    const [englishError] = english.body.errors ?? [];
    const [japaneseError] = japanese.body.errors ?? [];
    expect(japaneseError?.code).toBe(englishError?.code);
    expect(japaneseError?.param).toBe(englishError?.param);
    expect(japaneseError?.message).toBe(translated(latchkey.deps.catalogs.translator('ja'), englishError!.message));
    expect(japanese.headers['content-language']).toBe('ja');
    await app.close();
  });
});

describe.each(testDatabaseKinds())('a mail the outbox sends after a restart, on %s', (kind) => {
  let database: TestDatabase | undefined;
  afterEach(async () => {
    await database?.destroy();
  });

  it('keeps the language it was written in', async () => {
    database = await createTestDatabase(kind, 'username', { sqliteFile: true });
    // One secret key for both processes, as a deployment has: the outbox's mails are sealed with it.
    const settings = { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' as const, SECRET_KEY: 'a test key shared by the site before and after its restart' };
    const first = await createTestLatchkey({ kind, settings, database: await openDatabase(database.openOptions) });
    const browser = await PageClient.create(first);
    // The mail server is down while the person signs up: the mail waits in the outbox.
    vi.spyOn(first.mailer, 'send').mockRejectedValue(new Error('the mail server is down'));
    await browser.post('/accounts/signup/', { email: 'ines@example.com', username: 'ines', password1: PASSWORD, password2: PASSWORD }, { headers: { 'accept-language': 'es-ES,es;q=0.9' } });
    expect(first.mailer.outbox).toEqual([]);
    await browser.close();
    await first.destroy();

    // Another process on the same database, whose own requests would be in English.
    const restarted = await createTestLatchkey({ kind, settings, database: await openDatabase(database.openOptions) });
    restarted.clock.advance(24 * 60 * 60_000);
    expect(await restarted.mail.sweepOutbox()).toBe(1);
    const spanish = restarted.deps.catalogs.translator('es');
    expect(restarted.mailer.lastTo('ines@example.com')?.subject).toBe(`[Test Site] ${translated(spanish, 'Please confirm your email address')}`);
    await restarted.destroy();
  });
});
