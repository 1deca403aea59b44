/**
 * Which providers take a headless token login (/auth/provider/token), as allauth's
 * supports_token_authentication: google, apple, facebook and the generic openid_connect; every
 * other built-in kind answers token_authentication_not_supported. Checked on each kind's provider,
 * on the headless configuration's `flows`, and by real token logins on the app API, on every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { takesProviderTokens } from '../../../http/headless/provider-data.js';
import { testDatabaseKinds } from '../../../testing/database.js';
import { appOf, providersSettingOf } from '../../../testing/every-provider-kind.js';
import { HeadlessTestClient } from '../../../testing/headless.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../../testing/latchkey.js';
import { BUILT_IN_PROVIDER_KINDS } from '../registry.js';

/** allauth's providers with supports_token_authentication (allauth's dummy has it too; Latchkey's dummy signs in by its form only). */
const TAKE_TOKENS = new Set(['google', 'apple', 'facebook', 'openid_connect']);
const KINDS = BUILT_IN_PROVIDER_KINDS.map((kind) => kind.id);
/** What each kind's app is called in URLs and the headless API: its provider_id where it has one. */
const idOf = (kind: string) => appOf(kind).id;

describe('token login support of each built-in kind', () => {
  it.each(KINDS)('%s', (id) => {
    const kind = BUILT_IN_PROVIDER_KINDS.find((candidate) => candidate.id === id)!;
    const app = appOf(id);
    expect(kind.checkSettings(app.settings) ?? kind.checkApp?.(app)).toBeUndefined();
    const offline = () => Promise.reject(new Error('offline'));
    const provider = kind.build(app, { settings: testSettings(), clock: new ManualClock('2031-01-01T00:00:00Z'), http: { fetch: offline, timeoutSeconds: 1 } });
    expect(takesProviderTokens(provider)).toBe(TAKE_TOKENS.has(id));
  });

  it('names only kinds that exist', () => {
    expect([...TAKE_TOKENS].filter((id) => !KINDS.includes(id))).toEqual([]);
  });
});

describe.each(testDatabaseKinds())('headless token login support on %s', (database) => {
  let latchkey: TestLatchkey;
  let close: () => Promise<void>;
  afterEach(async () => {
    await close?.();
    await latchkey?.destroy();
  });

  async function clients(): Promise<{ browser: HeadlessTestClient; app: HeadlessTestClient }> {
    latchkey = await createTestLatchkey({ kind: database, settings: { SOCIALACCOUNT_PROVIDERS: providersSettingOf(KINDS) } });
    const server = await HeadlessTestClient.createApp(latchkey);
    close = () => server.close();
    return { browser: new HeadlessTestClient(server, 'browser', latchkey), app: new HeadlessTestClient(server, 'app', latchkey) };
  }

  it('offers token login for those kinds only, and the app client only the providers it can use', async () => {
    const { browser, app } = await clients();
    const offered = (await browser.get('/config')).body.data.socialaccount.providers as { id: string; flows: string[] }[];
    const flowsOf = Object.fromEntries(offered.map((provider) => [provider.id, provider.flows]));
    expect(Object.keys(flowsOf).sort()).toEqual(KINDS.map(idOf).sort());
    for (const kind of KINDS) {
      expect(flowsOf[idOf(kind)], kind).toEqual(TAKE_TOKENS.has(kind) ? ['provider_redirect', 'provider_token'] : ['provider_redirect']);
    }
    const forApps = (await app.get('/config')).body.data.socialaccount.providers as { id: string }[];
    expect(forApps.map((provider) => provider.id).sort()).toEqual([...TAKE_TOKENS].map(idOf).sort());
  });

  it.each(['okta', 'github', 'slack', 'amazon_cognito', 'linkedin'])('%s: refuses a token login with token_authentication_not_supported, signing nobody in', async (kind) => {
    const { app } = await clients();
    const refused = await app.post('/auth/provider/token', { provider: kind, process: 'login', token: { client_id: `${kind}-client`, id_token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln', access_token: 'a-token' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ status: 400, errors: [{ code: 'token_authentication_not_supported', param: 'provider', message: 'Provider does not support token authentication.' }] });
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect(refused.body.meta?.session_token).toBeUndefined();
  });
});
