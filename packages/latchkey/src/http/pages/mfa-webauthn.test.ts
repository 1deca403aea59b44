/**
 * The security key pages under /accounts/2fa/webauthn/ as a person uses them: the 2FA overview's
 * section, adding a passkey and a security key (behind a recent login, with a verified address,
 * the first with recovery codes), the list, renaming and removing; on every database. The key is
 * a software authenticator answering the options the page's script would fetch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { addWebauthnKeyFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';
import { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { addKeyThroughPage, creationOptionsFrom, fieldErrors } from '../../testing/webauthn-pages.js';

const PASSWORD = 'a long enough passphrase';
const KEYS = '/accounts/2fa/webauthn/';
const ADD = '/accounts/2fa/webauthn/add/';
const STALE_MS = 301 * 1000;
const WEBAUTHN: Partial<SettingValues> = { MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'], MFA_PASSKEY_LOGIN_ENABLED: true };

describe.each(testDatabaseKinds())('security key pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  let key: SoftwareAuthenticator;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, options: { verified?: boolean } = {}) {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', ...WEBAUTHN, ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: options.verified ?? true });
    key = new SoftwareAuthenticator('http://testserver');
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).statusCode).toBe(302);
  }

  const keyRows = async () => (await latchkey.deps.store.authenticators.listForUser(ada.id)).filter((each) => each.type === 'webauthn');
  const types = async () => (await latchkey.deps.store.authenticators.listForUser(ada.id)).map((each) => each.type).sort();
  const subjects = () => latchkey.mailer.outbox.map((mail) => mail.subject);

  describe('the 2FA overview', () => {
    it('offers security keys when webauthn is supported, and counts them once added', async () => {
      await setUp();
      const before = await browser.get('/accounts/2fa/');
      expect(before.body).toContain('id="mfa-webauthn-status">Inactive<');
      expect(before.body).toContain(`href="${ADD}"`);
      await addWebauthnKeyFor(latchkey, ada, { authenticator: key, passwordless: true });
      const after = await browser.get('/accounts/2fa/');
      expect(after.body).toContain('id="mfa-webauthn-status">Active<');
      expect(after.body).toContain('<span id="mfa-webauthn-count">1 key</span> added, of which 1 is a passkey');
      expect(after.body).toContain(`href="${KEYS}"`);
    });

    it('says nothing of security keys when the project does not offer them', async () => {
      await setUp({ MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes'], MFA_PASSKEY_LOGIN_ENABLED: false });
      expect((await browser.get('/accounts/2fa/')).body).not.toContain('mfa-webauthn-heading');
      const add = await browser.get(ADD);
      expect(add.headers.location).toBe('/accounts/2fa/');
      expect((await browser.get(KEYS)).body).not.toContain(`href="${ADD}"`);
    });
  });

  describe('adding a key', () => {
    it('shows the form with its script, a name field and the passkey box', async () => {
      await setUp();
      const page = await browser.get(ADD);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-security-policy']).toContain("default-src 'self'");
      expect(page.body).toContain('data-webauthn="create"');
      expect(page.body).toContain('<script src="/static/latchkey/webauthn.js" defer></script>');
      for (const name of ['csrfmiddlewaretoken', 'name', 'passwordless', 'credential']) expect(page.body).toContain(`name="${name}"`);
      const script = await browser.get('/static/latchkey/webauthn.js');
      expect(script.statusCode).toBe(200);
      expect(script.headers['content-type']).toMatch(/javascript/);
    });

    it('the passkey box asks the browser for a discoverable key that verifies the person', async () => {
      await setUp();
      const passkey = await creationOptionsFrom(browser, `${ADD}?passwordless=on`);
      expect(passkey.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      expect(passkey.rp.id).toBe('testserver');
      const plain = await creationOptionsFrom(browser, ADD);
      expect(plain.authenticatorSelection?.residentKey).toBe('discouraged');
    });

    it('the first key is a passkey with recovery codes, shown next; a second one goes to the list', async () => {
      await setUp();
      const sessionBefore = browser.cookies.get('sessionid');
      const first = await addKeyThroughPage(browser, key, { name: 'Laptop', passwordless: true });
      expect(first.statusCode).toBe(302);
      expect(first.headers.location).toBe('/accounts/2fa/recovery-codes/');
      expect(browser.cookies.get('sessionid')).not.toBe(sessionBefore);
      expect(await types()).toEqual(['recovery_codes', 'webauthn']);
      expect(subjects()).toHaveLength(1);
      const codes = await browser.get('/accounts/2fa/recovery-codes/');
      expect(codes.body).toContain('Security key added.');

      const second = await addKeyThroughPage(browser, new SoftwareAuthenticator('http://testserver'), { name: 'Blue USB key' });
      expect(second.headers.location).toBe(KEYS);
      const list = await browser.get(KEYS);
      expect(list.statusCode).toBe(200);
      expect(list.body).toMatch(/<td>Laptop<\/td>\s*<td>Passkey<\/td>/);
      expect(list.body).toMatch(/<td>Blue USB key<\/td>\s*<td>Security key<\/td>/);
      expect(list.body).toContain('Not used yet');
    });

    it('an empty name gets a default; a name too long is refused on the form', async () => {
      await setUp();
      await addKeyThroughPage(browser, key);
      expect((await keyRows())[0]!.data.name).toBe('Security key');
      const tooLong = await addKeyThroughPage(browser, new SoftwareAuthenticator('http://testserver'), { name: 'x'.repeat(65) });
      expect(tooLong.statusCode).toBe(400);
      expect(fieldErrors(tooLong.body, 'name')).toEqual(['Ensure this value has at most 64 characters.']);
      expect(await keyRows()).toHaveLength(1);
    });

    it('an answer that is no credential, or to options never asked for, is a form error', async () => {
      await setUp();
      for (const credential of ['', 'not json', '[1]', '{"id":"x"}']) {
        const refused = await browser.post(ADD, { name: 'x', credential });
        expect(refused.statusCode).toBe(400);
        expect(fieldErrors(refused.body, 'credential')).toEqual(['The security key could not be verified. Please try again.']);
      }
      // Answered from another origin: the ceremony is used up and nothing is stored.
      const options = await creationOptionsFrom(browser, ADD);
      const foreign = await browser.post(ADD, { credential: JSON.stringify(key.create(options, { origin: 'https://evil.example' })) });
      expect(foreign.statusCode).toBe(400);
      expect(await keyRows()).toEqual([]);
    });

    it('a script whose session has ended is sent to sign in', async () => {
      await setUp();
      await browser.post('/accounts/logout/', {});
      const options = await browser.get(ADD, { accept: 'application/json' });
      expect(options.statusCode).toBe(409);
      expect(JSON.parse(options.body)).toEqual({ location: `/accounts/login/?next=${encodeURIComponent(ADD)}` });
    });

    it('without a verified address: a clear message, no form, and no options', async () => {
      await setUp({}, { verified: false });
      const page = await browser.get(ADD);
      expect(page.body).toContain('You must verify your email address before you can add a security key.');
      expect(page.body).not.toContain('data-webauthn');
      const options = await browser.get(ADD, { accept: 'application/json' });
      expect(options.statusCode).toBe(400);
      expect(JSON.parse(options.body)).toEqual({ error: expect.stringContaining('verified your email address') });
    });

    it('without a recent login the page sends the person to reauthenticate, and so does the answer', async () => {
      await setUp();
      const options = await creationOptionsFrom(browser, ADD);
      latchkey.clock.advance(STALE_MS);
      const expected = `/accounts/reauthenticate/?next=${encodeURIComponent(ADD)}`;
      expect((await browser.get(ADD)).headers.location).toBe(expected);
      const posted = await browser.post(ADD, { credential: JSON.stringify(key.create(options)) });
      expect(posted.headers.location).toBe(expected);
      expect(await keyRows()).toEqual([]);
    });
  });

  describe('renaming and removing', () => {
    it('renames a key; an empty name keeps the old one', async () => {
      await setUp();
      const { authenticatorId } = await addWebauthnKeyFor(latchkey, ada, { authenticator: key, name: 'Old name' });
      const edit = `/accounts/2fa/webauthn/keys/${authenticatorId}/edit/`;
      const form = await browser.get(edit);
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('value="Old name"');
      const renamed = await browser.post(edit, { name: 'New name' });
      expect(renamed.headers.location).toBe(KEYS);
      expect((await browser.get(KEYS)).body).toContain('<td>New name</td>');
      await browser.post(edit, { name: '  ' });
      expect((await keyRows())[0]!.data.name).toBe('New name');
    });

    it('removes a key after a confirmation; the last one takes the recovery codes with it', async () => {
      await setUp();
      const { authenticatorId } = await addWebauthnKeyFor(latchkey, ada, { authenticator: key, name: 'Laptop' });
      latchkey.mailer.clear();
      const remove = `/accounts/2fa/webauthn/keys/${authenticatorId}/remove/`;
      const confirm = await browser.get(remove);
      expect(confirm.statusCode).toBe(200);
      expect(confirm.body).toContain('<strong id="mfa-webauthn-key-name">Laptop</strong>');
      expect(confirm.body).toContain('your recovery codes will be deleted as well');
      const removed = await browser.post(remove, {});
      expect(removed.headers.location).toBe(KEYS);
      expect(await types()).toEqual([]);
      expect(subjects()).toHaveLength(1);
      expect((await browser.get(KEYS)).body).toContain('Security key removed.');
    });
  });
});
