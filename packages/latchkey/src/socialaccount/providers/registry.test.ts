/**
 * The registry: the kinds it holds, and the proof that a provider on the OAuth 2.0 base is
 * one kind registered from one file. A small GitHub-shaped provider, declared here against the
 * fixture OAuth 2.0 server (testing/fixture-oauth2-server.ts), is given to createLatchkey and signs
 * a person up and in through the pages, as any provider does; its apps' settings are checked at
 * start-up and when an operator stores one, with nothing else of the library told about it.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { startFixtureOAuth2Server, type FixtureOAuth2Server } from '../../testing/fixture-oauth2-server.js';
import { createLatchkey } from '../../latchkey.js';
import { createTestLatchkey, testSettings, type TestLatchkey, type TestLatchkeyOptions } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { configurationError } from '../../testing/provider-outcomes.js';
import { addSocialApp, MANAGEMENT_COMMAND } from '../flows/manage-apps.js';
import type { ProviderKind } from './kind.js';
import { oauth2ProviderKind } from './oauth2.js';
import { isVouchedFor, textOf } from './profile-fields.js';
import { BUILT_IN_PROVIDER_KINDS, createProviderRegistry, urlSlugOf, withShownName } from './registry.js';

const BUILT_IN_IDS = BUILT_IN_PROVIDER_KINDS.map((kind) => kind.id).join(', ');

let fixture: FixtureOAuth2Server;
const app = () => ({ client_id: fixture.clientId, secret: fixture.config.clientSecret, name: 'Fixture Hub' });
beforeAll(async () => {
  fixture = await startFixtureOAuth2Server();
});
afterAll(() => fixture?.close());
beforeEach(() => {
  fixture.reset();
  fixture.config.user = { id: 4242, login: 'ada', name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true };
});

/** The whole of a provider on the OAuth 2.0 base: where its endpoints are, and how its profile maps to a person. */
function fixtureKind(): ProviderKind {
  return oauth2ProviderKind({
    type: 'fixture',
    name: 'Fixture Hub',
    authorizeUrl: fixture.authorizeUrl,
    accessTokenUrl: fixture.accessTokenUrl,
    profileUrl: fixture.profileUrl,
    defaultScope: ['read:user'],
    profile: (json) => {
      const email = textOf(json.email);
      return {
        uid: json.id,
        emails: email === undefined ? [] : [{ email, verified: isVouchedFor(json.email_verified), primary: true }],
        data: { email, username: textOf(json.login), name: textOf(json.name) },
      };
    },
  });
}

describe('the registry', () => {
  it('holds the built-in kinds, and a project’s after them', () => {
    const registry = createProviderRegistry([fixtureKind()]);
    const kinds = registry.kinds().map((kind) => [kind.id, kind.name]);
    // The generic ones first, the named ones (catalogue/), the development dummy, then the project's.
    expect(kinds.slice(0, 2)).toEqual([['openid_connect', 'OpenID Connect'], ['saml', 'SAML 2.0']]);
    expect(kinds.slice(-2)).toEqual([['dummy', 'Dummy'], ['fixture', 'Fixture Hub']]);
    expect(kinds).toEqual([...BUILT_IN_PROVIDER_KINDS.map((kind) => [kind.id, kind.name]), ['fixture', 'Fixture Hub']]);
    // Everything but the dummy may be stored in the database.
    expect(registry.storableKinds().map((kind) => kind.id)).toEqual([...BUILT_IN_PROVIDER_KINDS.filter((kind) => kind.id !== 'dummy').map((kind) => kind.id), 'fixture']);
    expect(registry.kind('no_such_provider')).toBeUndefined();
  });

  it('refuses two kinds with one id, and an id that cannot be a kind id', () => {
    expect(configurationError(() => createProviderRegistry([{ ...fixtureKind(), id: 'openid_connect' }]))).toBe(
      'Two social provider kinds are registered as "openid_connect": give each its own id.',
    );
    for (const id of ['Fixture', 'fix-ture', '', 'f'.repeat(31), '9lives']) {
      expect(configurationError(() => createProviderRegistry([{ ...fixtureKind(), id }]))).toMatch(/needs another id: lower-case letters, digits and "_"/);
    }
  });

  it('finds a kind by its slug, and refuses a slug that is no URL segment or that another kind is served at', () => {
    const registry = createProviderRegistry([{ ...fixtureKind(), slug: 'fixture-hub' }]);
    expect(registry.kindWithSlug('amazon-cognito')?.id).toBe('amazon_cognito');
    expect(registry.kindWithSlug('fixture-hub')?.id).toBe('fixture');
    // An id is not a slug: the kinds without one are served at their id, found by kind().
    expect(registry.kindWithSlug('amazon_cognito')).toBeUndefined();
    expect(registry.kindWithSlug('github')).toBeUndefined();
    for (const slug of ['Fixture', 'fix/ture', '-fixture', 'f'.repeat(31)]) {
      expect(configurationError(() => createProviderRegistry([{ ...fixtureKind(), slug }]))).toMatch(/needs another slug than/);
    }
    expect(configurationError(() => createProviderRegistry([{ ...fixtureKind(), slug: 'github' }]))).toBe(
      'The social provider kinds "fixture" and "github" are both served at /accounts/github/: give each its own slug.',
    );
    expect(configurationError(() => createProviderRegistry([{ ...fixtureKind(), slug: 'amazon-cognito' }]))).toMatch(/"amazon_cognito" and "fixture" are both served at \/accounts\/amazon-cognito\//);
  });

  it('shows an app without a name by its kind\'s name, and serves it at its kind\'s slug only when it goes by the kind\'s id', () => {
    const registry = createProviderRegistry();
    const app = { provider: 'amazon_cognito', providerId: '', id: 'amazon_cognito', name: '', clientId: 'c', secret: '', key: '', settings: {} };
    expect(withShownName(registry, app).name).toBe('Amazon Cognito');
    expect(withShownName(registry, { ...app, name: 'Staff pool' }).name).toBe('Staff pool');
    expect(withShownName(registry, { ...app, provider: 'removed_kind' }).name).toBe('amazon_cognito');
    expect(urlSlugOf(registry, app)).toBe('amazon-cognito');
    // An app with a provider_id of its own is served at it.
    expect(urlSlugOf(registry, { provider: 'amazon_cognito', id: 'staff-pool' })).toBe('staff-pool');
    expect(urlSlugOf(registry, { ...app, provider: 'github', id: 'github' })).toBe('github');
  });
});

describe('start-up with a provider kind of the project’s own', () => {
  /** The one line start-up stops with (it stops before opening any database). */
  async function refusedStart(settings: TestLatchkeyOptions['settings'], socialProviderKinds: ProviderKind[] = []): Promise<string> {
    const error = await createLatchkey({ settings: testSettings({ settings }), socialProviderKinds }).then((started) => started.close(), (caught: unknown) => caught);
    if (isLatchkeyError(error, 'configuration_invalid')) return error.message;
    throw new Error(`expected start-up to be refused, got ${String(error)}`);
  }

  it('is an unknown provider at start-up until it is registered, and its apps’ settings are checked there', async () => {
    const providers = { fixture: { APPS: [app()] } };
    expect(await refusedStart({ SOCIALACCOUNT_PROVIDERS: providers })).toBe(
      `SOCIALACCOUNT_PROVIDERS.fixture: unknown provider "fixture"; Latchkey signs in with ${BUILT_IN_IDS}.`,
    );
    const stringScope = { fixture: { APPS: [{ ...app(), settings: { scope: 'read:user user:email' } }] } };
    expect(await refusedStart({ SOCIALACCOUNT_PROVIDERS: stringScope }, [fixtureKind()])).toBe(
      'SOCIALACCOUNT_PROVIDERS.fixture: the app "fixture" has unusable settings: scope must be a list of strings, not a string: write ["read:user","user:email"].',
    );
  });
});

describe.each(testDatabaseKinds())('a provider kind of the project’s own, on %s', (database) => {
  let latchkey: TestLatchkey | undefined;
  let browser: PageClient | undefined;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
    browser = undefined;
    latchkey = undefined;
  });

  const start = (options: TestLatchkeyOptions) => createTestLatchkey({ kind: database, ...options });

  /** The button on the login page, the person at the fixture, and the callback: the site's answer's location. */
  async function signIn(client: PageClient): Promise<string | undefined> {
    const started = await client.post('/accounts/fixture/login/', {});
    expect(started.statusCode).toBe(302);
    const callback = await fixture.authorize(new URL(started.headers.location!));
    expect(callback.pathname).toBe('/accounts/fixture/login/callback/');
    return (await client.get(callback.pathname + callback.search)).headers.location;
  }

  it('signs a person up, then in again, through the normal flow, once registered', async () => {
    latchkey = await start({ socialProviderKinds: [fixtureKind()], settings: { SOCIALACCOUNT_PROVIDERS: { fixture: { APPS: [app()] } } } });
    browser = await PageClient.create(latchkey);
    const loginPage = (await browser.get('/accounts/login/')).body;
    expect(loginPage).toContain('href="/accounts/fixture/login/"');
    expect(loginPage).toContain('Fixture Hub');

    expect(await signIn(browser)).toBe('/');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(ada).toMatchObject({ username: 'ada', name: 'Ada Lovelace' });
    expect(await latchkey.deps.store.socialAccounts.listForUser(ada.id)).toMatchObject([{ provider: 'fixture', uid: '4242' }]);
    expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toMatchObject([{ email: 'ada@example.com', verified: true, primary: true }]);
    // The scope of the kind's description reached the fixture.
    expect(fixture.requests.find((request) => request.path === '/authorize')?.query.get('scope')).toBe('read:user');

    const again = browser.another();
    expect(await signIn(again)).toBe('/');
    expect(await latchkey.deps.sessions.load(again.cookies.get('sessionid'))).toMatchObject({ userId: ada.id });
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('may be stored by an operator, by its kind’s rules, and is offered at once', async () => {
    latchkey = await start({ socialProviderKinds: [fixtureKind()] });
    const fields = { provider: 'fixture', providerId: '', name: 'Fixture Hub', clientId: fixture.clientId, key: '' };
    const client = { ip: '203.0.113.7', userAgent: 'test' };
    const refused = await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...fields, settings: { oauth_pkce_enabled: 'no' }, secret: '' }, client).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'invalid_input', param: 'settings', reason: 'invalid_setting', message: 'oauth_pkce_enabled must be true or false, not a string.' });
    await addSocialApp(latchkey.deps, MANAGEMENT_COMMAND, { ...fields, settings: {}, secret: fixture.config.clientSecret }, client);
    browser = await PageClient.create(latchkey);
    expect(await signIn(browser)).toBe('/');
    expect(await latchkey.deps.store.socialAccounts.countForProvider('fixture')).toBe(1);
  });
});
