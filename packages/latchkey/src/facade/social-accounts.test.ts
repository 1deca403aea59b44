/**
 * latchkey.socialAccounts as a project's code uses it: connecting a provider account by code,
 * listing a user's provider accounts, and reading the provider's tokens.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storeProviderTokens } from '../socialaccount/tokens.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { latchkeyErrorOf } from '../testing/latchkey-error.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };


describe.each(testDatabaseKinds())('latchkey.socialAccounts on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function twoUsers(settings = {}) {
    latchkey = await createTestLatchkey({ kind, settings });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    return { ada, grace };
  }

  it('connect stores the provider account, and listForUser shows it with its extra data', async () => {
    const { ada } = await twoUsers();
    const now = latchkey.clock.now();

    const account = await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234', extraData: { login: 'ada', followers: 3 } });

    expect(account).toMatchObject({ userId: ada.id, provider: 'github', uid: '1234', extraData: { login: 'ada', followers: 3 }, lastLogin: now, dateJoined: now });
    expect(await latchkey.socialAccounts.listForUser(ada)).toEqual([account]);
  });

  it('connect keeps the last login given, and an empty extra data when none is given', async () => {
    const { ada } = await twoUsers();
    const lastLogin = new Date('2029-06-01T12:00:00.000Z');
    const account = await latchkey.socialAccounts.connect(ada, { provider: 'google', uid: 'sub-1', lastLogin });
    expect(account).toMatchObject({ lastLogin, dateJoined: lastLogin, extraData: {} });
    expect((await latchkey.socialAccounts.listForUser(ada))[0]).toMatchObject({ lastLogin, extraData: {} });
  });

  it('records social_account_added with the provider, from the client given', async () => {
    const { ada } = await twoUsers();
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' }, client);
    const records = (await latchkey.audit.listForUser(ada)).filter((record) => record.event === 'social_account_added');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ userId: ada.id, data: { provider: 'github' }, ipAddress: client.ip, userAgent: client.userAgent, createdAt: latchkey.clock.now() });
  });

  it('lists every provider account of the user, and none of anyone else', async () => {
    const { ada, grace } = await twoUsers();
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1' });
    await latchkey.socialAccounts.connect(ada, { provider: 'google', uid: '1' });
    await latchkey.socialAccounts.connect(grace, { provider: 'github', uid: '2' });
    expect((await latchkey.socialAccounts.listForUser(ada)).map((account) => `${account.provider}:${account.uid}`).sort()).toEqual(['github:1', 'google:1']);
    expect((await latchkey.socialAccounts.listForUser(grace)).map((account) => `${account.provider}:${account.uid}`)).toEqual(['github:2']);
  });

  it('refuses to connect a provider account already connected to another user, writing nothing and telling nobody', async () => {
    const { ada, grace } = await twoUsers();
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });
    const heard = vi.fn();
    latchkey.events.subscribe('*', heard);

    expect(await latchkeyErrorOf(() => latchkey.socialAccounts.connect(grace, { provider: 'github', uid: '1234' }, client))).toMatchObject({ code: 'social_account_exists' });

    expect(await latchkey.socialAccounts.listForUser(grace)).toEqual([]);
    expect(await latchkey.audit.listForUser(grace)).toEqual([]);
    expect(await latchkey.socialAccounts.listForUser(ada)).toHaveLength(1);
    expect(heard).not.toHaveBeenCalled();
  });

  it('refuses to connect the same provider account to the same user twice', async () => {
    const { ada } = await twoUsers();
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });
    expect(await latchkeyErrorOf(() => latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' }))).toMatchObject({ code: 'social_account_exists' });
    expect(await latchkey.socialAccounts.listForUser(ada)).toHaveLength(1);
    expect((await latchkey.audit.listForUser(ada)).filter((record) => record.event === 'social_account_added')).toHaveLength(1);
  });

  it('connects the same uid at another provider: it is another person', async () => {
    const { ada, grace } = await twoUsers();
    await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });
    await latchkey.socialAccounts.connect(grace, { provider: 'gitlab', uid: '1234' });
    expect(await latchkey.socialAccounts.listForUser(grace)).toEqual([expect.objectContaining({ provider: 'gitlab', uid: '1234' })]);
  });

  it('refuses to connect to an account that does not exist, with not_found', async () => {
    const { ada } = await twoUsers();
    expect(await latchkeyErrorOf(() => latchkey.socialAccounts.connect({ id: ada.id + 1000 }, { provider: 'github', uid: '1234' }))).toMatchObject({ code: 'not_found' });
    expect(await latchkey.socialAccounts.listForUser({ id: ada.id + 1000 })).toEqual([]);
  });

  it('providerTokens is undefined when no token is stored', async () => {
    const { ada } = await twoUsers();
    const account = await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });
    expect(await latchkey.socialAccounts.providerTokens(account)).toBeUndefined();
  });

  it('providerTokens gives the tokens stored at sign-in in clear, with their expiry', async () => {
    const { ada } = await twoUsers({ SOCIALACCOUNT_STORE_TOKENS: true });
    const account = await latchkey.socialAccounts.connect(ada, { provider: 'github', uid: '1234' });
    const expiresAt = new Date('2030-01-01T01:00:00.000Z');
    // No public operation stores a provider's tokens (a sign-in through the provider does): stored
    // here as that sign-in would store them.
    await latchkey.deps.store.transaction((repositories) =>
      storeProviderTokens(latchkey.deps, repositories, account.id, {}, { accessToken: 'access-1', refreshToken: 'refresh-1', expiresAt }),
    );

    expect(await latchkey.socialAccounts.providerTokens(account)).toEqual({ accessToken: 'access-1', refreshToken: 'refresh-1', expiresAt });
  });
});
