import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { fillForm, launchBrowser, linkFromEmail, newPage, screenshot, startSite, submit, expectNoConsoleErrors } from './harness.js';

it('username site: manage, login form, stop', async () => {
  const site = await startSite();
  const browser = await launchBrowser();
  try {
    console.log('SITE', site.url);
    const made = await site.manage(['createsuperuser', '--username', 'ada', '--email', 'ada@example.com', '--noinput'], { LATCHKEY_SUPERUSER_PASSWORD: 'correct horse battery staple' });
    console.log('MANAGE', made);
    const page = await newPage(browser, { baseURL: site.url });
    const r0 = await page.goto('/accounts/login/');
    console.log('LOGIN GET', r0?.status());
    await screenshot(page, 'login');
    await fillForm(page, { login: 'ada', password: 'wrong password!' });
    const bad = await submit(page);
    console.log('BAD', bad.status(), page.url());
    await screenshot(page, 'login failed');
    await fillForm(page, { login: 'ada', password: 'correct horse battery staple' });
    const ok = await submit(page, 'Sign in');
    console.log('OK', ok.status(), page.url(), await page.locator('main').textContent());
    await screenshot(page, 'signed in');
    try { expectNoConsoleErrors(page); } catch (e) { console.log('CONSOLE', (e as Error).message); }
  } finally {
    await browser.close();
    const exit = await site.stop();
    console.log('EXIT', exit, site.output().stdout.includes('SIGTERM received'));
    console.log('PROCS', execSync('ps -eo pid,pgid,args | grep -E "tsx|server.ts" | grep -v grep || true').toString());
  }
}, 60_000);

it('email site starts', async () => {
  const site = await startSite({ usernameType: 'email' });
  try {
    const r = await fetch(`${site.url}/accounts/login/`);
    const body = await r.text();
    console.log('EMAIL LOGIN', r.status, /name="login"[^>]*>/.exec(body)?.[0], body.match(/<label[^>]*>[^<]*/g));
  } finally {
    console.log('EXIT', await site.stop());
  }
}, 60_000);

it('bad env fails with one line and cleans up', async () => {
  await expect(startSite({ env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'sometimes' } })).rejects.toThrow(/LATCHKEY_ACCOUNT_EMAIL_VERIFICATION/);
  expect(linkFromEmail({ subject: 's', text: 'Go to http://127.0.0.1:1/accounts/confirm-email/abc:def/.\nor https://x/y' }, '/accounts/confirm-email/')).toBe('http://127.0.0.1:1/accounts/confirm-email/abc:def/');
  expect(() => linkFromEmail({ subject: 's', text: 'nothing http://a/b' }, '/c')).toThrow(/its links: http:\/\/a\/b/);
  expect(existsSync('/tmp')).toBe(true);
}, 60_000);
