/**
 * The project's translations (locale/, README.md "Translations"): its catalogs hold every message
 * of src/ and templates/, as `npm run makemessages` writes them, and the pages speak the reader's
 * language, Latchkey's words and the project's alike. (test/site.test.ts sees the server do it too.)
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { User } from '@latchkey/core';
import type { TestLatchkey } from '@latchkey/core/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { Browser, csrfTokenOf } from './browser.js';
import { createLatchkeyWithTestFields } from './project.js';

const run = promisify(execFile);
const projectRoot = fileURLToPath(new URL('..', import.meta.url));

describe('the translation catalogs', () => {
  it('are up to date with the messages of src/ and templates/ (after changing one, run npm run makemessages)', async () => {
    const checked = await run(process.execPath, ['--import', 'tsx', 'src/manage.ts', 'makemessages', '--check'], { cwd: projectRoot });
    expect(checked.stdout).toContain('no catalog changed');
  });
});

describe('the pages in the reader’s language', () => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<void> {
    latchkey = await createLatchkeyWithTestFields();
    app = await buildApp(latchkey);
    await app.ready();
  }

  function addAda(): Promise<User> {
%% if username %%
    return latchkey.users.create({ username: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', password: null, emailVerified: true });
%% else %%
    return latchkey.users.create({ email: 'ada@example.com', name: 'Ada Lovelace', password: null, emailVerified: true });
%% endif %%
  }

  /** A signed-in browser whose person chose `language` with the language switch (its cookie). */
  async function signedIn(user: User, language: string): Promise<Browser> {
    const browser = new Browser(app);
    browser.cookies.set('sessionid', (await latchkey.sessions.startSignedIn(user)).cookieValue);
    browser.cookies.set('django_language', language);
    return browser;
  }

  it('shows the home page in the language the browser asks for, its two links inside one sentence', async () => {
    await setUp();
    const home = await app.inject({ url: '/', headers: { host: 'testserver', 'accept-language': 'de-AT, en;q=0.5' } });
    expect(home.body).toContain('<html lang="de" dir="ltr">');
    expect(home.body).toContain('<title>Startseite · Test Site</title>');
    expect(home.body).toContain('<p>Sie sind nicht angemeldet.</p>');
    expect(home.body).toContain('<p><a class="lk-button" id="sign-in-link" href="/accounts/login/">Anmelden</a> oder <a id="sign-up-link" href="/accounts/signup/">ein Konto erstellen</a>.</p>');
    const arabic = await app.inject({ url: '/', headers: { host: 'testserver', 'accept-language': 'ar' } });
    expect(arabic.body).toContain('<html lang="ar" dir="rtl">');
    expect(arabic.body).toContain('<p>لم تسجّل الدخول.</p>');
  });

  it("words the user's own page, the flash message and the not-found page in the person's language, and their own data as they wrote it", async () => {
    await setUp();
    const ada = await addAda();
    // The tests' own fields (test/project.ts), which are no field of the project's declared type.
    const fields: Record<string, unknown> = { birth_date: '1815-12-10', newsletter: true, company: 'Analytical Engines' };
    await latchkey.users.update(ada, fields);
    const browser = await signedIn(ada, 'fr');

    const home = await browser.get('/');
%% if username %%
    expect(home.body).toContain('<p>Connecté en tant que ada.</p>');
%% else %%
    expect(home.body).toContain('<p>Connecté en tant que ada@example.com.</p>');
%% endif %%
    expect(home.body).toContain('<a href="/users/~redirect/">Votre profil</a>');

    const own = await browser.get((await browser.get('/users/~redirect/')).headers.location as string);
    expect(own.body).toContain('<dt>Nom</dt>');
    expect(own.body).toContain('<dd id="profile-name">Ada Lovelace</dd>');
    // A label the project declared is looked up in its catalogs too; this one has no translation there.
    expect(own.body).toMatch(/<dt>Send me the newsletter<\/dt>\s*<dd id="profile-newsletter">Oui<\/dd>/);
    expect(own.body).toContain('<dd id="profile-company">Analytical Engines</dd>');
    expect(own.body).toContain('>Modifier vos informations</a>');

    const form = await browser.get('/users/~update/');
    expect(form.body).toContain('<title>Modifier vos informations · Test Site</title>');
    expect(form.body).toContain('<label for="id_name">Nom</label>');
    const saved = await browser.post('/users/~update/', [['csrfmiddlewaretoken', csrfTokenOf(form.body)], ['name', 'Ada King'], ['birth_date', '1815-12-10']]);
    expect(saved.statusCode).toBe(302);
    expect((await browser.get(saved.headers.location as string)).body).toContain('Vos informations ont été mises à jour.');

    const nobody = await browser.get('/users/nobody/');
    expect(nobody.statusCode).toBe(404);
    expect(nobody.body).toBe(
      '<!doctype html>\n<html lang="fr" dir="ltr"><head><meta charset="utf-8"><title>Page introuvable</title></head>' +
        '<body><h1>Page introuvable</h1><p>Il n’y a aucune page à cette adresse.</p></body></html>\n',
    );
  });
});
