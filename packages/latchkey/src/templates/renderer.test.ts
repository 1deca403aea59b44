import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';
import { latchkeyUrls } from '../config/url-names.js';
import { createTemplateRenderer } from './renderer.js';
import { loadCatalogs } from '../core/i18n/catalogs.js';

const english = loadCatalogs({ languages: ['en'] }).translator('en');

describe('template overrides', () => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  it("uses a project's account/login.html instead of the library's, and keeps the library's other templates", async () => {
    const projectTemplates = mkdtempSync(join(tmpdir(), 'lk-templates-'));
    mkdirSync(join(projectTemplates, 'account'));
    writeFileSync(
      join(projectTemplates, 'account', 'login.html'),
      '{% extends "account/base.html" %}{% block content %}<p id="custom">Our own sign-in, {{ site_name }}</p>{% endblock %}',
    );
    latchkey = await createTestLatchkey({ templateDirs: [projectTemplates] });
    browser = await PageClient.create(latchkey);
    const login = await browser.get('/accounts/login/');
    expect(login.body).toContain('<p id="custom">Our own sign-in, Test Site</p>');
    expect(login.body).toContain('/static/latchkey/latchkey.css');
    expect((await browser.get('/accounts/inactive/')).body).toContain('This account is inactive.');
  });

  it('escapes values: a name with markup is shown as text', async () => {
    latchkey = await createTestLatchkey();
    browser = await PageClient.create(latchkey);
    const html = latchkey.deps.templates.render('account/base.html', { title: '<script>alert(1)</script>', site_name: 'x' }, english);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)</script>');
  });

  it('does not HTML-escape plain-text templates', async () => {
    latchkey = await createTestLatchkey();
    browser = await PageClient.create(latchkey);
    const text = latchkey.deps.templates.render('account/email/email_confirmation_message.txt', { user: { name: "O'Brien & Co" }, email: 'a@example.com' }, english);
    expect(text).toContain("Hello O'Brien & Co,");
  });

  it('serves the default stylesheet locally', async () => {
    latchkey = await createTestLatchkey();
    browser = await PageClient.create(latchkey);
    const css = await browser.get('/static/latchkey/latchkey.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
  });
});

describe('url() in templates, as Django {% url %}', () => {
  function rendererWith(template: string) {
    const dir = mkdtempSync(join(tmpdir(), 'lk-url-'));
    writeFileSync(join(dir, 'page.html'), template);
    return createTemplateRenderer({ projectDirs: [dir], cache: false, urls: latchkeyUrls({ ADMIN_URL: 'staff-7f3k/', URL_PREFIX: '' }) });
  }

  it("gives a page's path by its allauth name, with its key filled in and encoded", () => {
    expect(rendererWith('<a href="{{ url(\'account_login\') }}">in</a>').render('page.html', {}, english)).toBe('<a href="/accounts/login/">in</a>');
    expect(rendererWith("{{ url('account_confirm_email', { key: key }) }}").render('page.html', { key: 'a/b' }, english)).toBe('/accounts/confirm-email/a%2Fb/');
  });

  it("gives an admin page's path by Django's name, under ADMIN_URL", () => {
    expect(rendererWith("{{ url('admin:index') }} {{ url('admin:logout') }}").render('page.html', {}, english)).toBe('/staff-7f3k/ /staff-7f3k/logout/');
    expect(rendererWith("{{ url('admin:model_change', { app: 'users', model: 'user', id: 7 }) }}").render('page.html', {}, english)).toBe('/staff-7f3k/users/user/7/change/');
  });

  it('refuses a name no page has, rather than render a dead link', () => {
    expect(() => rendererWith("{{ url('acount_login') }}").render('page.html', {}, english)).toThrow(/no page is named acount_login/);
  });
});
