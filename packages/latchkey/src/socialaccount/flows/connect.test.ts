/**
 * Connecting a provider account is a change of how one signs in: the flows themselves (not the
 * doors) ask for a recent proof of identity, when the connect starts and when the provider's
 * answer arrives, on each database. The provider is allauth's dummy one, configured as a project
 * would; the answers are what its callback would hand over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REAUTHENTICATION_WINDOW_SECONDS } from '../../account/flows/reauthenticate.js';
import { createUser } from '../../account/users.js';
import { isLatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import type { ConfiguredProvider } from '../directory.js';
import type { ProviderProfile } from '../providers/provider.js';
import { connectSocialAccount } from './connect.js';
import { startProviderLogin } from './provider-login.js';

const CLIENT = { ip: '203.0.113.9', userAgent: 'test' };
const STALE_MS = (REAUTHENTICATION_WINDOW_SECONDS + 1) * 1000;

const ADA_AT_DUMMY: ProviderProfile = {
  uid: 'ada-1815',
  emails: [{ email: 'ada@example.com', verified: true, primary: true }],
  data: { email: 'ada@example.com', name: 'Ada Lovelace' },
  extraData: { id: 'ada-1815' },
};

async function refusalOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => undefined, (error: unknown) => error);
}

describe.each(testDatabaseKinds())('connecting a provider account on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp() {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: { dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] } } } });
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@home.example', password: 'a long enough passphrase', emailVerified: true });
    const configured = (await latchkey.deps.providerDirectory.provider('dummy')) as ConfiguredProvider;
    return { user, configured };
  }

  it('refuses to start a connect without a recent proof of identity, and starts one with it', async () => {
    const { user, configured } = await setUp();
    const signedInAt = latchkey.clock.now();
    const start = (lastAuthenticatedAt: Date | undefined) =>
      startProviderLogin(latchkey.deps, configured.provider, { process: 'connect', requester: { user, lastAuthenticatedAt }, redirectUri: 'http://testserver/accounts/dummy/login/callback/', next: '' });

    const started = await start(signedInAt);
    expect(started.record).toMatchObject({ process: 'connect', userId: user.id, provider: 'dummy' });
    latchkey.clock.advance(STALE_MS);
    for (const lastAuthenticatedAt of [signedInAt, undefined]) {
      expect(isLatchkeyError(await refusalOf(start(lastAuthenticatedAt)), 'reauthentication_required')).toBe(true);
    }
    // A login asks nothing of the kind.
    expect((await startProviderLogin(latchkey.deps, configured.provider, { process: 'login', redirectUri: 'http://testserver/accounts/dummy/login/callback/', next: '' })).record.userId).toBeUndefined();
  });

  it('connects only for a requester who proved who they are within the window when the answer arrives', async () => {
    const { user, configured } = await setUp();
    const signedInAt = latchkey.clock.now();
    latchkey.clock.advance(STALE_MS);
    const stale = await refusalOf(connectSocialAccount(latchkey.deps, { user, lastAuthenticatedAt: signedInAt }, configured, { profile: ADA_AT_DUMMY }, CLIENT));
    expect(isLatchkeyError(stale, 'reauthentication_required')).toBe(true);
    expect(await latchkey.deps.store.socialAccounts.find('dummy', 'ada-1815')).toBeUndefined();
    expect((await latchkey.deps.store.auditLog.listForUser(user.id, 100)).map((record) => record.event)).not.toContain('social_account_added');

    const connected = await connectSocialAccount(latchkey.deps, { user, lastAuthenticatedAt: latchkey.clock.now() }, configured, { profile: ADA_AT_DUMMY }, CLIENT);
    expect(connected.status).toBe('connected');
    expect(await latchkey.deps.store.socialAccounts.find('dummy', 'ada-1815')).toMatchObject({ userId: user.id });
  });
});
