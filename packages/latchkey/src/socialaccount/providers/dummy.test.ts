/**
 * The dummy provider and its page on the site: a developer fills the form as a browser would (the
 * page through inject(), with its CSRF token), the callback's code is checked by the provider, and
 * nothing forged, altered, expired or meant for another sign-in gets through.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import { registerDummyAuthorizationPage } from '../../http/pages/dummy-provider.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { mainOf, PageClient } from '../../testing/pages.js';
import { UID_MAX_LENGTH } from '../model.js';
import { dummyProvider, issueDummyCode, type DummyPerson } from './dummy.js';
import { ProviderError, type RedirectProvider } from './provider.js';

const SITE_URL = 'http://testserver';
const CALLBACK = `${SITE_URL}/accounts/dummy/login/callback/`;
const ADA: DummyPerson = { id: 'ada-1815', email: 'ada@example.com', emailVerified: true, name: 'Ada Lovelace' };

/** The ProviderError a promise rejects with (failing the test if it resolves or throws anything else). */
async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error: unknown = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

function configurationError(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    if (isLatchkeyError(error, 'configuration_invalid')) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('the dummy provider and its page', () => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let provider: RedirectProvider;

  beforeEach(async () => {
    latchkey = await createTestLatchkey();
    const ctx = { deps: latchkey.deps, sessions: latchkey.requestSessions, client: 'browser' as const };
    browser = await PageClient.create(latchkey, { plugin: { routes: (scope) => registerDummyAuthorizationPage(scope, { ctx }) } });
    provider = dummyProvider({ environment: 'test', siteUrl: latchkey.settings.SITE_URL, secretKey: latchkey.settings.SECRET_KEY, clock: latchkey.clock });
  });
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  /** The authorization URL, the page's form filled as `fields`, and the redirect back: the callback URL. */
  async function fillForm(state: string, fields: Record<string, string>, redirectUri = CALLBACK): Promise<URL> {
    const { url } = await provider.authorizationUrl({ redirectUri, state });
    const form = await browser.get(url.pathname + url.search);
    expect(form.statusCode).toBe(200);
    const answer = await browser.post(url.pathname, { state, redirect_uri: redirectUri, ...fields });
    expect(answer.statusCode).toBe(302);
    return new URL(answer.headers.location!);
  }

  const asAda = { id: ADA.id, email: ADA.email, email_verified: 'true', name: ADA.name, action: 'authenticate' };

  it('sends the browser to the page on the site itself', async () => {
    expect(latchkey.settings.SITE_URL).toBe(SITE_URL);
    expect(await provider.authorizationOrigin()).toBe(SITE_URL);
    const { url, pending } = await provider.authorizationUrl({ redirectUri: CALLBACK, state: 'the-state' });
    expect(url.toString()).toBe(`${SITE_URL}/accounts/dummy/authenticate/?state=the-state&redirect_uri=${encodeURIComponent(CALLBACK)}`);
    expect(pending).toEqual({});
    expect(provider).toMatchObject({ id: 'dummy', type: 'dummy', name: 'Dummy' });
  });

  it('signs in as whoever the form names, with the address verified only when ticked', async () => {
    const callback = await fillForm('state-1', asAda);
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe('state-1');
    const { profile, tokens } = await provider.completeAuthorization({ callbackUrl: callback, redirectUri: CALLBACK, expectedState: 'state-1', pending: {} });
    expect(profile).toEqual({
      uid: 'ada-1815',
      emails: [{ email: 'ada@example.com', verified: true, primary: true }],
      data: { email: 'ada@example.com', name: 'Ada Lovelace' },
      extraData: { id: 'ada-1815', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' },
    });
    expect(tokens.accessToken).not.toBe('');

    const unticked = await fillForm('state-2', { id: 'grace', email: 'grace@example.com', name: '' });
    const grace = await provider.completeAuthorization({ callbackUrl: unticked, redirectUri: CALLBACK, expectedState: 'state-2', pending: {} });
    expect(grace.profile.emails).toEqual([{ email: 'grace@example.com', verified: false, primary: true }]);
    expect(grace.profile.data).toEqual({ email: 'grace@example.com', name: undefined });

    const noAddress = await fillForm('state-3', { id: 'anonymous' });
    expect((await provider.completeAuthorization({ callbackUrl: noAddress, redirectUri: CALLBACK, expectedState: 'state-3', pending: {} })).profile.emails).toEqual([]);
  });

  it('reports Cancel as a cancelled sign-in', async () => {
    const callback = await fillForm('state-c', { action: 'cancel' });
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const error = await providerError(provider.completeAuthorization({ callbackUrl: callback, redirectUri: CALLBACK, expectedState: 'state-c', pending: {} }));
    expect(error.reason).toBe('cancelled');
  });

  it('refuses a callback whose state is not the sign-in’s', async () => {
    const callback = await fillForm('the-real-state', asAda);
    const error = await providerError(provider.completeAuthorization({ callbackUrl: callback, redirectUri: CALLBACK, expectedState: 'another-state', pending: {} }));
    expect(error.reason).toBe('failed');
    expect(error.message).toMatch(/state is not this sign-in's/);
  });

  it('refuses a code made for another sign-in, even when the URL’s state is changed to match', async () => {
    const callback = await fillForm('mallory-state', asAda);
    callback.searchParams.set('state', 'victim-state');
    const error = await providerError(provider.completeAuthorization({ callbackUrl: callback, redirectUri: CALLBACK, expectedState: 'victim-state', pending: {} }));
    expect(error.message).toMatch(/another sign-in's state/);
  });

  it('refuses an altered code, one signed with another key, and one for another callback', async () => {
    const callback = await fillForm('s', asAda);
    const code = callback.searchParams.get('code')!;
    const finish = (codeValue: string, redirectUri = CALLBACK) => {
      const url = new URL(CALLBACK);
      url.searchParams.set('state', 's');
      url.searchParams.set('code', codeValue);
      return providerError(provider.completeAuthorization({ callbackUrl: url, redirectUri, expectedState: 's', pending: {} }));
    };
    const [body, time, signature] = code.split('.') as [string, string, string];
    const asMallory = Buffer.from(Buffer.from(body, 'base64url').toString('utf8').replace('ada-1815', 'mallory'), 'utf8').toString('base64url');
    expect((await finish(`${asMallory}.${time}.${signature}`)).message).toMatch(/not issued by the dummy page/);
    const otherKey = issueDummyCode('another-secret-key', { person: ADA, state: 's', redirectUri: CALLBACK }, latchkey.clock.now());
    expect((await finish(otherKey)).message).toMatch(/not issued by the dummy page/);
    expect((await finish(code, `${SITE_URL}/accounts/other/login/callback/`)).message).toMatch(/issued for the callback/);
  });

  it('refuses a code older than ten minutes, by the clock the site keeps', async () => {
    const callback = await fillForm('s', asAda);
    latchkey.clock.advance(10 * 60 * 1000);
    expect((await provider.completeAuthorization({ callbackUrl: callback, redirectUri: CALLBACK, expectedState: 's', pending: {} })).profile.uid).toBe('ada-1815');
    latchkey.clock.advance(1000);
    const error = await providerError(provider.completeAuthorization({ callbackUrl: callback, redirectUri: CALLBACK, expectedState: 's', pending: {} }));
    expect(error.message).toMatch(/has expired/);
  });

  it('escapes what it shows back on the page', async () => {
    const state = '"><script>alert(1)</script>';
    const form = await browser.get(`/accounts/dummy/authenticate/?state=${encodeURIComponent(state)}&redirect_uri=${encodeURIComponent(CALLBACK)}`);
    expect(form.statusCode).toBe(200);
    expect(form.body).not.toContain('<script>');
    expect(form.body).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(form.headers['content-security-policy']).toContain("form-action 'self'");

    const refused = await browser.post('/accounts/dummy/authenticate/', { state: 's', redirect_uri: CALLBACK, id: '<b>x</b>', email: '<img src=x>', action: 'authenticate' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('value="&lt;b&gt;x&lt;/b&gt;"');
    expect(refused.body).not.toContain('<img src=x>');
  });

  it('checks the form: an id of at most UID_MAX_LENGTH characters, an address that looks like one', async () => {
    const post = (fields: Record<string, string>) => browser.post('/accounts/dummy/authenticate/', { state: 's', redirect_uri: CALLBACK, action: 'authenticate', ...fields });
    expect((await post({ id: '  ' })).body).toContain('This field is required.');
    expect((await post({ id: 'x'.repeat(UID_MAX_LENGTH + 1) })).statusCode).toBe(400);
    expect((await post({ id: 'x', email: 'not an address' })).body).toContain('Enter a valid email address.');
    expect((await post({ id: 'x'.repeat(UID_MAX_LENGTH), email: 'x@example.com' })).statusCode).toBe(302);
  });

  it('sends the browser only to a callback on this site, and only with the form’s CSRF token', async () => {
    const offSite = await browser.get(`/accounts/dummy/authenticate/?state=s&redirect_uri=${encodeURIComponent('https://evil.example/callback/')}`);
    expect(offSite.statusCode).toBe(400);
    expect(mainOf(offSite.body)).not.toContain('<form');
    const posted = await browser.post('/accounts/dummy/authenticate/', { state: 's', redirect_uri: 'https://evil.example/callback/', ...asAda });
    expect(posted.statusCode).toBe(400);
    expect((await browser.get('/accounts/dummy/authenticate/?state=s')).statusCode).toBe(400);
    const withoutToken = await browser.another().post('/accounts/dummy/authenticate/', { state: 's', redirect_uri: CALLBACK, ...asAda }, { csrf: false });
    expect(withoutToken.statusCode).toBe(403);
  });
});

describe('the dummy provider in production', () => {
  it('refuses to be made, and its page refuses to be registered', async () => {
    expect(configurationError(() => dummyProvider({ environment: 'production', siteUrl: 'https://example.com', secretKey: 'k' }))).toMatch(/development and tests only/);
    const latchkey = await createTestLatchkey();
    try {
      const production = { ...latchkey.deps, settings: { ...latchkey.settings, ENVIRONMENT: 'production' as const } };
      const ctx = { deps: production, sessions: latchkey.requestSessions, client: 'browser' as const };
      expect(configurationError(() => registerDummyAuthorizationPage({} as never, { ctx }))).toMatch(/ENVIRONMENT is production/);
    } finally {
      await latchkey.destroy();
    }
  });
});
