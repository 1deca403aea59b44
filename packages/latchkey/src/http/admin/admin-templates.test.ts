/**
 * A project overrides the admin's templates as it does the account pages' (docs/admin.md,
 * "Overriding the admin's templates"): a file at the same path in one of its template folders is
 * used instead of the library's, and the admin's other templates stay the library's.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { addPerson, signInToAdmin } from '../../testing/admin-pages.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const LIBRARY_TEMPLATES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'templates');

describe('overriding the admin’s templates', () => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let projectTemplates: string;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
    rmSync(projectTemplates, { recursive: true, force: true });
  });

  it('uses a project’s admin/base.html and admin/index.html, and the library’s other admin pages under the new layout', async () => {
    projectTemplates = mkdtempSync(join(tmpdir(), 'lk-admin-templates-'));
    mkdirSync(join(projectTemplates, 'admin'));
    // The layout, copied from the library as the docs suggest, with the project's brand; the index
    // written before translations, printing a model's label as it is (a message says itself in English).
    const layout = readFileSync(join(LIBRARY_TEMPLATES, 'admin', 'base.html'), 'utf8').replace('{{ _("{site_name} administration", { site_name: site_name }) }}</a>', 'Acme back office</a>');
    expect(layout).toContain('Acme back office');
    writeFileSync(join(projectTemplates, 'admin', 'base.html'), layout);
    writeFileSync(
      join(projectTemplates, 'admin', 'index.html'),
      '{% extends "admin/base.html" %}{% block content %}<p id="acme-index">{% for model in models %}<a href="{{ model.url }}">{{ model.label }}</a>{% endfor %}</p>{% endblock %}',
    );
    latchkey = await createTestLatchkey({ templateDirs: [projectTemplates] });
    browser = await PageClient.create(latchkey);
    await addPerson(latchkey, 'root', { isStaff: true, isSuperuser: true });
    expect((await signInToAdmin(browser, 'root')).headers.location).toBe('/admin/');

    const index = await browser.get('/admin/');
    expect(index.body).toContain('<p id="acme-index"><a href="/admin/users/user/">Users</a>');
    expect(index.body).toContain('Acme back office');
    const users = await browser.get('/admin/users/user/');
    expect(users.statusCode).toBe(200);
    expect(users.body).toContain('Acme back office');
    expect(users.body).toContain('>root</a>');
    expect(users.body).not.toContain('Test Site administration</a>');
    // The layout's logout form still carries the CSRF token: the override kept it, and it works.
    expect((await browser.post('/admin/logout/', {})).headers.location).toBe('/admin/login/');
    expect((await browser.get('/admin/')).headers.location).toBe('/admin/login/?next=%2Fadmin%2F');
  });
});
