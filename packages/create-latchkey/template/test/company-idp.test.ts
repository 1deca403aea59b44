/**
 * The company identity provider's rules (src/users/adapters.ts) in the running site, on every
 * database: while public signup is closed, a provider named in SAML_AUTO_PROVISION_IDPS still signs
 * its people up, narrowed to SAML_AUTO_PROVISION_DEPARTMENTS when set; and the department the IdP
 * sent last is shown on the person's own page. allauth's dummy provider stands in for the IdP in the
 * signups: a SAML IdP needs keys and XML signatures that a project's tests do not carry (Latchkey's
 * own suite signs people in through a real one). The department is read where a SAML sign-in
 * leaves it, the social account's attributes.
 */
import type { User } from '@latchkey/core';
import { testDatabaseKinds, type TestLatchkey } from '@latchkey/core/testing';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { lookupOf } from '../src/users/lookup.js';
import { AccountAdapter, SocialAccountAdapter, type AutoProvisioning } from '../src/users/adapters.js';
import { Browser, signInThroughDummy } from './browser.js';
import { createProjectLatchkey } from './project.js';

/** An IdP's entity id, as SocialLogin.provider and the social account carry it. */
const ACME_IDP = 'http://www.okta.com/exk123';
const ADA = { id: 'ada-1815', email: 'ada@example.com', name: 'Ada Lovelace' };

describe.each(testDatabaseKinds())('the company identity provider on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  /** The site with public signup closed, and the project's adapters as src/server.ts passes them (provisioning given here, not read from the environment). */
  async function setUp(autoProvisioning: AutoProvisioning): Promise<Browser> {
    latchkey = await createProjectLatchkey({
      kind,
      env: { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' },
      settings: { SOCIALACCOUNT_PROVIDERS: { dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] } } },
      adapter: (settings) => new AccountAdapter(settings),
      socialAdapter: (settings) => new SocialAccountAdapter(settings, autoProvisioning),
    });
    app = await buildApp(latchkey);
    await app.ready();
    return new Browser(app);
  }

  it('signs up the people of a listed provider while public signup is closed, and nobody through another', async () => {
    const listed = await setUp({ idps: ['dummy'], departments: [] });
    expect((await listed.get('/accounts/signup/')).body).toContain('the sign up is currently closed');
    expect((await signInThroughDummy(listed, ADA)).statusCode).toBe(302);
    const ada = await latchkey.users.findByEmail(ADA.email);
    expect(await latchkey.socialAccounts.listForUser(ada!)).toMatchObject([{ provider: 'dummy', uid: ADA.id }]);
    await latchkey.destroy();

    const unlisted = await setUp({ idps: [ACME_IDP], departments: [] });
    const refused = await signInThroughDummy(unlisted, ADA);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('the sign up is currently closed');
    expect(await latchkey.users.count()).toBe(0);
  });

  it('refuses a listed provider’s person whose department is not listed (the dummy sends none)', async () => {
    const browser = await setUp({ idps: ['dummy'], departments: ['Engineering'] });
    expect((await signInThroughDummy(browser, ADA)).statusCode).toBe(403);
    expect(await latchkey.users.count()).toBe(0);
  });

  describe("the person's own page", () => {
    function addUser(handle: string, email: string): Promise<User> {
%% if username %%
      return latchkey.users.create({ username: handle, email, name: handle, password: 'a long enough passphrase', emailVerified: true });
%% else %%
      return latchkey.users.create({ email, name: handle, password: 'a long enough passphrase', emailVerified: true });
%% endif %%
    }

    /** The social account a SAML sign-in leaves: the IdP's attributes by name, each a list of values. */
    function samlAccount(user: User, provider: string, attributes: Record<string, string[]>, lastLogin: Date) {
      return latchkey.socialAccounts.connect(user, { provider, uid: `${user.id}-at-${provider}`, extraData: attributes, lastLogin });
    }

    async function ownPage(user: User): Promise<string> {
      const browser = new Browser(app);
      browser.cookies.set('sessionid', (await latchkey.sessions.startSignedIn(user)).cookieValue);
      const page = await browser.get(`/users/${encodeURIComponent(lookupOf(user))}/`);
      expect(page.statusCode).toBe(200);
      return page.body;
    }

    it('shows the department the IdP sent last, escaped, and no department row for a person without one', async () => {
      await setUp({ idps: [ACME_IDP], departments: [] });
      const now = latchkey.clock.now();
      const ada = await addUser('ada', 'ada@example.com');
      await samlAccount(ada, ACME_IDP, { department: ['Engineering', 'Research'], mail: ['ada@example.com'] }, now);
      expect(await ownPage(ada)).toContain('<dd id="profile-department">Engineering</dd>');

      // Signed in later through another IdP, which says another department: that one is shown.
      await samlAccount(ada, 'https://sts.windows.net/t1/', { department: ['R&D <Labs>'] }, new Date(now.getTime() + 60_000));
      expect(await ownPage(ada)).toContain('<dd id="profile-department">R&amp;D &lt;Labs&gt;</dd>');

      const grace = await addUser('grace', 'grace@example.com');
      await samlAccount(grace, ACME_IDP, { mail: ['grace@example.com'] }, now);
      const page = await ownPage(grace);
      expect(page).toContain('id="profile-name"');
      expect(page).not.toContain('profile-department');
    });
  });
});
