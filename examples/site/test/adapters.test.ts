import type { FastifyInstance } from 'fastify';
import { isLatchkeyError, NAME_MAX_LENGTH } from '@latchkey/core';
import { testDatabaseKinds, testSettings, type TestLatchkey } from '@latchkey/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { AccountAdapter, autoProvisioningFromEnvironment, departmentOf, SocialAccountAdapter } from '../src/users/adapters.js';
import { createProjectLatchkey } from './project.js';

const PASSWORD = 'a long enough passphrase';
const ALLOWLIST = { LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: 'example.com,example.org' };

function refusal(adapter: AccountAdapter, email: string): string | undefined {
  try {
    adapter.cleanEmail(email);
    return undefined;
  } catch (error) {
    if (!isLatchkeyError(error, 'invalid_email')) throw error;
    return error.message;
  }
}

describe('the account adapter', () => {
  it('opens signup unless ACCOUNT_ALLOW_REGISTRATION is false', () => {
    expect(new AccountAdapter(testSettings()).isOpenForSignup()).toBe(true);
    expect(new AccountAdapter(testSettings({ env: { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' } })).isOpenForSignup()).toBe(false);
  });

  it('allows any domain while ACCOUNT_EMAIL_DOMAIN_ALLOWLIST is empty (the default)', () => {
    const adapter = new AccountAdapter(testSettings());
    expect(adapter.cleanEmail('someone@anywhere.net')).toBe('someone@anywhere.net');
  });

  it('allows exactly the listed domains, read from LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST', () => {
    const adapter = new AccountAdapter(testSettings({ env: ALLOWLIST }));
    expect(adapter.cleanEmail('ada@example.com')).toBe('ada@example.com');
    expect(adapter.cleanEmail('ada@example.org')).toBe('ada@example.org');
    for (const email of ['ada@example.net', 'ada@mail.example.com', 'ada@example.com.evil.net', 'ada@notexample.com']) {
      expect(refusal(adapter, email)).toBe('Sign-up is limited to addresses at: example.com, example.org.');
    }
  });
});

describe('the social account adapter', () => {
  const login = (data: Record<string, string>) => ({ provider: 'openid_connect', uid: '1', data });

  it('follows the same signup switch as local accounts', () => {
    expect(new SocialAccountAdapter(testSettings()).isOpenForSignup(login({}))).toBe(true);
    const closed = new SocialAccountAdapter(testSettings({ env: { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' } }));
    expect(closed.isOpenForSignup(login({}))).toBe(false);
  });

  it("leaves the domain allowlist to the account adapter's cleanEmail, which Latchkey asks about a provider's address too", () => {
    const adapter = new SocialAccountAdapter(testSettings({ env: ALLOWLIST }));
    for (const email of ['ada@example.org', 'ada@example.net', '']) expect(adapter.isOpenForSignup(login({ email }))).toBe(true);
  });

  it("fills the name from the provider's name, or else from its first and last names", async () => {
    const adapter = new SocialAccountAdapter(testSettings());
    const nameOf = async (data: Record<string, string>) => (await adapter.populateUser(login({ email: 'ada@example.com', ...data }))).name;
    expect(await nameOf({ name: 'Ada Lovelace', firstName: 'Augusta', lastName: 'King' })).toBe('Ada Lovelace');
    expect(await nameOf({ firstName: 'Ada', lastName: 'Lovelace' })).toBe('Ada Lovelace');
    expect(await nameOf({ name: '  ', firstName: 'Ada' })).toBe('Ada');
    expect(await nameOf({ lastName: 'Lovelace' })).toBe('Lovelace');
    expect(await nameOf({})).toBe('');
    // A null character cannot be stored (PostgreSQL refuses it in text): dropped, never saved.
    expect(await nameOf({ name: 'Ada\u0000 Lovelace' })).toBe('Ada Lovelace');
    expect(await nameOf({ name: '\u0000', firstName: 'Ada' })).toBe('');
    // A name longer than the field is cut to fit, not refused: the person did not type it.
    expect([...(await nameOf({ name: 'é'.repeat(NAME_MAX_LENGTH + 10) }))]).toHaveLength(NAME_MAX_LENGTH);
  });

  it("keeps the provider's address for the new user", async () => {
    const user = await new SocialAccountAdapter(testSettings()).populateUser(login({ email: 'ada@example.com', name: 'Ada' }));
    expect(user).toMatchObject({ email: 'ada@example.com', name: 'Ada' });
  });
});

describe('signup through the company identity provider while public signup is closed', () => {
  const ACME = 'http://www.okta.com/exk123';
  const closed = () => testSettings({ env: { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' } });
  const saml = (provider: string, extraData: Record<string, unknown> = {}) => ({ provider, uid: 'ada', data: {}, extraData });

  it('reads the IdPs and departments from SAML_AUTO_PROVISION_IDPS and SAML_AUTO_PROVISION_DEPARTMENTS', () => {
    expect(autoProvisioningFromEnvironment({})).toEqual({ idps: [], departments: [] });
    const read = autoProvisioningFromEnvironment({ SAML_AUTO_PROVISION_IDPS: ` ${ACME} ,,https://sts.windows.net/t1/`, SAML_AUTO_PROVISION_DEPARTMENTS: 'Engineering, Support' });
    expect(read).toEqual({ idps: [ACME, 'https://sts.windows.net/t1/'], departments: ['Engineering', 'Support'] });
  });

  it('signs up the people of a listed IdP, and no one through another provider', () => {
    const adapter = new SocialAccountAdapter(closed(), { idps: [ACME], departments: [] });
    expect(adapter.isOpenForSignup(saml(ACME))).toBe(true);
    expect(adapter.isOpenForSignup(saml('http://www.okta.com/exk999'))).toBe(false);
    expect(adapter.isOpenForSignup(saml('openid_connect'))).toBe(false);
    expect(new SocialAccountAdapter(closed(), { idps: [], departments: [] }).isOpenForSignup(saml(ACME))).toBe(false);
  });

  it("limits the IdP's signups to the listed departments, by the first value of its department attribute", () => {
    const adapter = new SocialAccountAdapter(closed(), { idps: [ACME], departments: ['Engineering', 'Support'] });
    expect(adapter.isOpenForSignup(saml(ACME, { department: ['Engineering'] }))).toBe(true);
    expect(adapter.isOpenForSignup(saml(ACME, { department: [' Support '] }))).toBe(true);
    expect(adapter.isOpenForSignup(saml(ACME, { department: ['Sales'] }))).toBe(false);
    expect(adapter.isOpenForSignup(saml(ACME, { department: ['Sales', 'Engineering'] }))).toBe(false);
    expect(adapter.isOpenForSignup(saml(ACME, { department: ['engineering'] }))).toBe(false);
    expect(adapter.isOpenForSignup(saml(ACME, { department: [] }))).toBe(false);
    expect(adapter.isOpenForSignup(saml(ACME))).toBe(false);
    // Another provider's department does not open the door: only the listed IdP's people are provisioned.
    expect(adapter.isOpenForSignup(saml('openid_connect', { department: ['Engineering'] }))).toBe(false);
  });

  it('leaves signup open to everyone, whatever their department, while ACCOUNT_ALLOW_REGISTRATION is true', () => {
    const adapter = new SocialAccountAdapter(testSettings(), { idps: [ACME], departments: ['Engineering'] });
    expect(adapter.isOpenForSignup(saml(ACME, { department: ['Sales'] }))).toBe(true);
    expect(adapter.isOpenForSignup(saml('openid_connect'))).toBe(true);
  });

  it('reads the department as the first value of the attribute, or a plain string, else empty', () => {
    expect(departmentOf(saml(ACME, { department: ['Engineering', 'Sales'] }))).toBe('Engineering');
    expect(departmentOf(saml(ACME, { department: 'Support' }))).toBe('Support');
    expect(departmentOf(saml(ACME, { department: [42] }))).toBe('');
    expect(departmentOf({ provider: ACME, uid: 'ada', data: {} })).toBe('');
  });
});

describe.each(testDatabaseKinds())('signup with an allowlist on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  async function setUp() {
    // The project's adapter, as src/server.ts passes it to createLatchkey.
    latchkey = await createProjectLatchkey({
      kind,
      env: ALLOWLIST,
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' },
      adapter: (settings) => new AccountAdapter(settings),
    });
    app = await buildApp(latchkey);
    await app.ready();
  }

  /** A browser's round trip: the form's page sets the CSRF cookie, and the POST sends it back. */
  async function signup(email: string) {
    const page = await app.inject({ url: '/accounts/signup/', headers: { host: 'testserver' } });
    const csrf = page.cookies.find((cookie) => cookie.name === 'csrftoken')!.value;
    return app.inject({
      method: 'POST',
      url: '/accounts/signup/',
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
      cookies: { csrftoken: csrf },
      payload: new URLSearchParams({ csrfmiddlewaretoken: csrf, email, username: 'ada', password1: PASSWORD, password2: PASSWORD }).toString(),
    });
  }

  it('refuses another domain with a clear form error and stores nothing', async () => {
    await setUp();
    const refused = await signup('ada@elsewhere.net');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Sign-up is limited to addresses at: example.com, example.org.');
    expect(await latchkey.users.count()).toBe(0);
    expect(latchkey.mailer.outbox).toHaveLength(0);
  });

  it('signs up an address at a listed domain, in any case', async () => {
    await setUp();
    const accepted = await signup('Ada@EXAMPLE.org');
    expect(accepted.statusCode).toBe(302);
    expect((await latchkey.users.findByEmail('ada@example.org'))?.email).toBe('ada@example.org');
  });
});
