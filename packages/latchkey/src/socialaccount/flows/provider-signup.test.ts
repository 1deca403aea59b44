/**
 * A signup from a provider under the project's rules on addresses (AccountAdapter.cleanEmail), on
 * every database, through the one flow every door calls (finishProviderLogin, then the social
 * signup form): an address cleanEmail refuses is never signed up with automatically; the form
 * says why and takes another, which cleanEmail judges again; the address stored is the one
 * cleanEmail returns.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AccountAdapter } from '../../account/adapter.js';
import { isLatchkeyError, LatchkeyError, refusalsOf } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { dummyProviders } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import type { ConfiguredProvider } from '../directory.js';
import type { ProviderProfile } from '../providers/provider.js';
import { finishProviderLogin } from './provider-login.js';
import { completeProviderSignup, providerSignupInitial } from './provider-signup.js';
import type { ProviderLoginResult } from './results.js';
import { msg } from '../../core/i18n/message.js';

const REFUSAL = 'Sign-up is limited to addresses at example.com.';

/** A project's rules: addresses at example.com only, and without a "+tag" (stored as the plain address). */
class ExampleComOnly extends AccountAdapter {
  override cleanEmail(email: string): string {
    const [local = '', domain = ''] = email.split('@');
    if (domain !== 'example.com') throw new LatchkeyError('invalid_email', REFUSAL, { param: 'email' });
    return `${local.split('+')[0]}@${domain}`;
  }
}

const context = { client: { ip: '192.0.2.1', userAgent: 'test' } };

/** What the provider says of a person whose address it vouches for. */
function profileWith(email: string): ProviderProfile {
  return { uid: 'ada-1815', emails: [{ email, verified: true, primary: true }], data: { email, name: 'Ada Lovelace', username: 'ada' }, extraData: {} };
}

/** The LatchkeyError a promise rejects with (failing the test if it resolves or throws anything else). */
async function refusalOf(promise: Promise<unknown>): Promise<LatchkeyError> {
  const error: unknown = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!isLatchkeyError(error)) throw new Error(`expected a LatchkeyError, got ${String(error)}`);
  return error;
}

describe.each(testDatabaseKinds())("a provider's signup under the project's cleanEmail, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let dummy: ConfiguredProvider;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() }, adapter: (settings) => new ExampleComOnly(settings) });
    dummy = (await latchkey.deps.providerDirectory.provider('dummy'))!;
  }

  const signUp = (email: string): Promise<ProviderLoginResult> => finishProviderLogin(latchkey.deps, dummy, { profile: profileWith(email) }, '/welcome/', context);

  it('never signs up automatically with an address cleanEmail refuses: the form says why, and takes an address it accepts', async () => {
    await setUp();
    const result = await signUp('ada@elsewhere.net');
    if (result.status !== 'signup_form') throw new Error(`expected the signup form, got ${result.status}`);
    expect(result.signup).toMatchObject({ provider: 'dummy', next: '/welcome/' });
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect(await latchkey.deps.store.socialAccounts.find('dummy', 'ada-1815')).toBeUndefined();

    // The form starts with the provider's address and the project's refusal of it.
    expect(await providerSignupInitial(latchkey.deps, result.signup)).toEqual({ email: 'ada@elsewhere.net', username: 'ada', emailRefusal: msg(REFUSAL), userFields: {} });

    // Sent again as it is, it is refused again, and nothing is written.
    const refused = await refusalOf(completeProviderSignup(latchkey.deps, dummy, result.signup, { email: 'ada@elsewhere.net', username: 'ada' }, context));
    expect([refused.code, refused.message, refused.param]).toEqual(['invalid_email', REFUSAL, 'email']);
    expect(await latchkey.deps.store.users.count()).toBe(0);

    // Another address, which cleanEmail accepts: the account, its provider account, and the address
    // unverified (the provider vouched for another one), so it is confirmed by mail as any typed one.
    const done = await completeProviderSignup(latchkey.deps, dummy, result.signup, { email: 'ada@example.com', username: 'ada' }, context);
    expect(done.status).toBe('login');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(ada).toMatchObject({ username: 'ada', name: 'Ada Lovelace' });
    expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toMatchObject([{ email: 'ada@example.com', verified: false }]);
    expect(await latchkey.deps.store.socialAccounts.find('dummy', 'ada-1815')).toMatchObject({ userId: ada.id });
  });

  it('signs up automatically with an address cleanEmail accepts, stored as cleanEmail returns it', async () => {
    await setUp();
    expect((await signUp('ada@example.com')).status).toBe('login');
    const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    // The provider vouched for exactly this address: stored verified.
    expect(await latchkey.deps.store.emailAddresses.listForUser(ada.id)).toMatchObject([{ email: 'ada@example.com', verified: true }]);
    await latchkey.destroy();

    await setUp();
    expect((await signUp('ada+news@example.com')).status).toBe('login');
    const cleaned = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    // An address the provider did not give as such is not taken as vouched for.
    expect(await latchkey.deps.store.emailAddresses.listForUser(cleaned.id)).toMatchObject([{ email: 'ada@example.com', verified: false }]);
    expect(await latchkey.deps.store.users.findByEmail('ada+news@example.com')).toBeUndefined();
  });

  it('shows an address the provider gave that is no address at all as refused, without asking cleanEmail to judge it', async () => {
    await setUp();
    const result = await signUp('not an address');
    if (result.status !== 'signup_form') throw new Error(`expected the signup form, got ${result.status}`);
    expect(await latchkey.deps.store.users.count()).toBe(0);
    const initial = await providerSignupInitial(latchkey.deps, result.signup);
    expect(initial.emailRefusal).toBeDefined();
    expect(initial.emailRefusal?.id).not.toBe(REFUSAL);
  });
});

/** A project's rule on usernames: none that could pass for the site's staff. */
class NoStaffNames extends AccountAdapter {
  override cleanUsername(username: string): string {
    if (/^(admin|staff)/i.test(username)) throw new LatchkeyError('invalid_username', 'That username is reserved.', { param: 'username' });
    return username.toLowerCase();
  }
}

describe.each(testDatabaseKinds())("a provider's signup under the project's cleanUsername, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let dummy: ConfiguredProvider;
  afterEach(() => latchkey.destroy());

  async function signUp(username: string, uid: string): Promise<ProviderLoginResult> {
    const email = `${uid}@example.com`;
    const profile: ProviderProfile = { uid, emails: [{ email, verified: true, primary: true }], data: { email, name: 'Someone', username }, extraData: {} };
    return finishProviderLogin(latchkey.deps, dummy, { profile }, '/welcome/', context);
  }

  it('never signs up automatically with a username cleanUsername refuses, and stores the one it returns', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() }, adapter: (settings) => new NoStaffNames(settings) });
    dummy = (await latchkey.deps.providerDirectory.provider('dummy'))!;

    const refused = await signUp('Administrator', 'mallory');
    expect(refused.status).toBe('signup_form');
    expect(await latchkey.deps.store.users.count()).toBe(0);
    if (refused.status !== 'signup_form') return;
    const typed = await refusalOf(completeProviderSignup(latchkey.deps, dummy, refused.signup, { email: 'mallory@example.com', username: 'admin' }, context));
    expect([typed.code, typed.param]).toEqual(['invalid_username', 'username']);
    // A bad username and a bad address are refused together, each on its field.
    const both = await refusalOf(completeProviderSignup(latchkey.deps, dummy, refused.signup, { email: 'no address', username: 'admin' }, context));
    expect(refusalsOf(both).map((error) => [error.code, error.param])).toEqual([
      ['invalid_username', 'username'],
      ['invalid_email', 'email'],
    ]);
    expect((await completeProviderSignup(latchkey.deps, dummy, refused.signup, { email: 'mallory@example.com', username: 'mallory' }, context)).status).toBe('login');

    expect((await signUp('Grace', 'grace')).status).toBe('login');
    expect(await latchkey.deps.store.users.findByEmail('grace@example.com')).toMatchObject({ username: 'grace' });
  });
});
