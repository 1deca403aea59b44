/**
 * What a provider sign-in leaves to the account through the headless API, for the browser and the
 * app client, on every database, against a real provider (oidc-provider on loopback): the
 * provider's signup form when its answer cannot sign a person up alone, the signed-in user's
 * provider accounts, and disconnecting one (never the last way in, never someone else's, only
 * after a recent sign-in). Every JSON response is checked against allauth's published contract by
 * the test client, and here against Latchkey's own OpenAPI document too.
 */
import { Ajv } from 'ajv';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountAdapter } from '../../account/adapter.js';
import { createUser } from '../../account/users.js';
import { LatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessSocialSite, startHeadlessCorpProvider, CORP_ACCOUNTS, PASSWORD, STALE_MS } from '../../testing/headless-social.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';
import { servedHeadlessDocument } from '../../testing/headless-openapi.js';

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startHeadlessCorpProvider(CORP_ACCOUNTS);
});
afterAll(() => provider.close());

describe.each(testDatabaseKinds())('headless provider accounts on %s', (kind) => {
  let site: HeadlessSocialSite;
  afterEach(() => site.close());

  async function setUp(): Promise<void> {
    site = await HeadlessSocialSite.create(kind, provider);
  }

  describe.each(['browser', 'app'] as const)('%s client', (which) => {
    it('keeps a signup the provider could not finish for the signup form: GET shows it, POST completes it', async () => {
      await setUp();
      const { latchkey } = site;
      // Grace's address at the provider already has an account here: no automatic signup, and never a link.
      await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      const api = site.client(which);
      expect((await api.get('/auth/provider/signup')).status).toBe(409);
      const pending = await site.tokenLogin(api, 'grace-at-corp');
      expect(pending.status).toBe(401);
      const signupFlow = { id: 'provider_signup', is_pending: true, provider: expect.objectContaining({ id: 'corp', name: 'Corp SSO', flows: ['provider_redirect', 'provider_token'] }) };
      expect(pending.body.data.flows).toContainEqual(signupFlow);
      expect((await api.get('/auth/session')).body.data.flows).toContainEqual(signupFlow);

      const form = await api.get('/auth/provider/signup');
      expect(form.status).toBe(200);
      expect(form.body.data).toEqual({
        email: [{ email: 'grace@example.com', primary: true, verified: true }],
        account: { uid: 'grace-at-corp', display: 'Grace Hopper', provider: expect.objectContaining({ id: 'corp' }) },
        user: { display: 'Grace Hopper', has_usable_password: false, email: 'grace@example.com', username: 'grace' },
      });

      const taken = await api.post('/auth/provider/signup', { email: 'grace@example.com', username: 'gracehopper' });
      expect(taken.status).toBe(400);
      expect(taken.body.errors).toEqual([{ message: expect.stringContaining('An account already exists with this email address.'), code: 'email_taken', param: 'email' }]);
      const invalid = await api.post('/auth/provider/signup', { email: 'not an address', username: 'gracehopper' });
      expect(invalid.status).toBe(400);
      expect(invalid.body.errors?.[0]?.param).toBe('email');

      // A new address the provider did not vouch for: confirmed by mail first, as mandatory verification says.
      const done = await api.post('/auth/provider/signup', { email: 'grace.hopper@corp.example', username: 'gracehopper' });
      expect(done.status).toBe(401);
      expect(done.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      expect(latchkey.mailer.lastTo('grace.hopper@corp.example')).toBeDefined();
      const created = (await latchkey.deps.store.users.findByEmail('grace.hopper@corp.example'))!;
      expect(created).toMatchObject({ username: 'gracehopper', name: 'Grace Hopper' });
      expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toMatchObject({ userId: created.id });
      expect((await api.get('/auth/provider/signup')).status).toBe(409);
      expect((await api.post('/auth/provider/signup', { email: 'x@corp.example', username: 'x' })).status).toBe(409);
    });

    it("keeps a new person whose address the project's cleanEmail refuses for the signup form, which takes an address it accepts", async () => {
      await setUp();
      const { latchkey } = site;
      // The project's rule (a domain allowlist, in the generated project): example.com only.
      latchkey.deps.adapter = new (class extends AccountAdapter {
        override cleanEmail(email: string): string {
          if (email.endsWith('@example.com')) return email;
          throw new LatchkeyError('invalid_email', 'Sign-up is limited to addresses at: example.com.', { param: 'email' });
        }
      })(latchkey.settings);
      const api = site.client(which);
      const pending = await site.tokenLogin(api, 'ada-at-corp');
      expect(pending.status).toBe(401);
      expect(pending.body.data.flows).toContainEqual(expect.objectContaining({ id: 'provider_signup', is_pending: true }));
      expect(await latchkey.deps.store.users.count()).toBe(0);
      expect((await api.get('/auth/provider/signup')).body.data.user).toMatchObject({ email: 'ada@corp.example' });

      const refused = await api.post('/auth/provider/signup', { email: 'ada@corp.example', username: 'ada' });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ message: 'Sign-up is limited to addresses at: example.com.', code: 'invalid', param: 'email' }]);
      expect(await latchkey.deps.store.users.count()).toBe(0);

      const done = await api.post('/auth/provider/signup', { email: 'ada@example.com', username: 'ada' });
      expect(done.status).toBe(401);
      expect(done.body.data.flows).toContainEqual({ id: 'verify_email', is_pending: true });
      const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
      expect(await latchkey.deps.store.socialAccounts.find('corp', 'ada-at-corp')).toMatchObject({ userId: ada.id });
    });

    it('ends a waiting signup form when the next provider answer signs the client in', async () => {
      await setUp();
      await createUser(site.latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      const api = site.client(which);
      expect((await site.tokenLogin(api, 'grace-at-corp')).status).toBe(401);
      expect((await api.get('/auth/provider/signup')).status).toBe(200);
      // The same client signs in as Ada instead: Grace's form is no longer what it waits for.
      expect((await site.tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      expect((await api.get('/auth/provider/signup')).status).toBe(409);
      expect((await api.get('/auth/session')).body.data.flows ?? []).not.toContainEqual(expect.objectContaining({ id: 'provider_signup' }));
    });

    it('lists provider accounts, disconnects one, and refuses to disconnect the last way in or someone else’s', async () => {
      await setUp();
      const { latchkey } = site;
      const api = site.client(which);
      expect((await api.get('/account/providers')).status).toBe(401);
      expect((await site.tokenLogin(api, 'ada-at-corp')).status).toBe(200);
      const corp = expect.objectContaining({ id: 'corp', name: 'Corp SSO' });
      expect((await api.get('/account/providers')).body.data).toEqual([{ uid: 'ada-at-corp', display: 'Ada Lovelace', provider: corp }]);

      // Ada has no password: the provider is her only way in.
      const last = await api.delete('/account/providers', { provider: 'corp', account: 'ada-at-corp' });
      expect(last.status).toBe(400);
      expect(last.body.errors).toEqual([{ message: 'Your account has no password set up.', code: 'no_password', param: 'account' }]);
      const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      await latchkey.deps.store.socialAccounts.create({ userId: grace.id, provider: 'corp', uid: 'grace-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
      const notHers = await api.delete('/account/providers', { provider: 'corp', account: 'grace-at-corp' });
      expect(notHers.status).toBe(400);
      expect(notHers.body.errors?.[0]?.code).toBe('account_not_found');
      expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toBeDefined();

      // Grace, with a password and a verified address, may drop it: after a recent sign-in.
      const graceApi = site.client(which);
      expect((await graceApi.post('/auth/login', { username: 'grace', password: PASSWORD })).status).toBe(200);
      latchkey.clock.advance(STALE_MS);
      const stale = await graceApi.delete('/account/providers', { provider: 'corp', account: 'grace-at-corp' });
      expect(stale.status).toBe(401);
      expect(stale.body.meta.is_authenticated).toBe(true);
      expect(stale.body.data.flows).toContainEqual({ id: 'reauthenticate' });
      expect(await latchkey.deps.store.socialAccounts.find('corp', 'grace-at-corp')).toBeDefined();
      expect((await graceApi.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      const removed = await graceApi.delete('/account/providers', { provider: 'corp', account: 'grace-at-corp' });
      expect(removed.status).toBe(200);
      expect(removed.body.data).toEqual([]);
      expect(latchkey.mailer.lastTo('grace@example.com')?.subject).toMatch(/disconnected|removed/i);
    });

    it('refuses to disconnect the only provider of a user without a verified address under mandatory verification', async () => {
      await setUp();
      const { latchkey } = site;
      const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: false });
      await latchkey.deps.store.socialAccounts.create({ userId: bob.id, provider: 'corp', uid: 'ada-at-corp', extraData: {}, dateJoined: latchkey.clock.now(), lastLogin: latchkey.clock.now() });
      const api = site.client(which);
      // Bob's logins stop at verify_email; here the test makes his session, and he confirms his password.
      const session = await latchkey.deps.sessions.create({ userId: bob.id });
      if (which === 'app') api.sessionToken = session.id;
      else api.cookies.set(latchkey.deps.settings.SESSION_COOKIE_NAME, session.id);
      expect((await api.post('/auth/reauthenticate', { password: PASSWORD })).status).toBe(200);
      const refused = await api.delete('/account/providers', { provider: 'corp', account: 'ada-at-corp' });
      expect([refused.status, refused.body.errors?.[0]?.code]).toEqual([400, 'no_verified_email']);
    });
  });

  it("answers in the shapes of Latchkey's own OpenAPI document too", async () => {
    await setUp();
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema(await servedHeadlessDocument(), 'latchkey');
    const expectShape = (pointer: string, body: unknown) => {
      const validate = ajv.compile({ $ref: `latchkey#/${pointer.startsWith('paths/') ? pointer : `components/${pointer}`}` });
      expect(validate(body), `${pointer}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    await createUser(site.latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    const api = site.client('browser');
    expectShape('paths/~1_allauth~1{client}~1v1~1config/get/responses/200/content/application~1json/schema', (await api.get('/config')).body);
    expectShape('schemas/AuthenticationResponse', (await site.tokenLogin(api, 'grace-at-corp')).body);
    expectShape('paths/~1_allauth~1{client}~1v1~1auth~1provider~1signup/get/responses/200/content/application~1json/schema', (await api.get('/auth/provider/signup')).body);
    const ada = api.another();
    expectShape('schemas/AuthenticatedResponse', (await site.tokenLogin(ada, 'ada-at-corp')).body);
    expectShape('paths/~1_allauth~1{client}~1v1~1account~1providers/get/responses/200/content/application~1json/schema', (await ada.get('/account/providers')).body);
  });
});
