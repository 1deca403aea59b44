/**
 * The project's own user fields (docs/user-fields.md) at a provider's signup, on every database:
 * the signup's fields (ACCOUNT_SIGNUP_FIELDS) are taken from what populateUser gives when they
 * pass their rules, and otherwise the social signup form asks them, filled in with what it gave,
 * judging them with the address and username, every refusal at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isLatchkeyError, refusalsOf, type LatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { dummyProviders } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { TEST_USER_FIELD_MIGRATIONS, TEST_USER_FIELDS } from '../../testing/user-fields.js';
import { SocialAccountAdapter, type NewSocialUser, type SocialLogin } from '../adapter.js';
import type { ConfiguredProvider } from '../directory.js';
import type { ProviderProfile } from '../providers/provider.js';
import { finishProviderLogin } from './provider-login.js';
import { completeProviderSignup, providerSignupInitial } from './provider-signup.js';

const context = { client: { ip: '192.0.2.1', userAgent: 'test' } };

/** A project whose provider tells the company, and a birth date when its data has one. */
class CompanyFromProvider extends SocialAccountAdapter {
  override async populateUser(login: SocialLogin): Promise<NewSocialUser> {
    const user = await super.populateUser(login);
    const born = (login.data as Record<string, unknown>).birthdate;
    // The library's own tests declare no ProjectUserFields, so the fields are added untyped here.
    return Object.assign(user, { company: 'Analytical Engines' }, typeof born === 'string' ? { birth_date: born } : {});
  }
}

function profile(data: Record<string, unknown> = {}): ProviderProfile {
  const email = 'ada@example.com';
  return { uid: 'ada-1815', emails: [{ email, verified: true, primary: true }], data: { email, name: 'Ada Lovelace', username: 'ada', ...data }, extraData: {} };
}

async function refusalOf(promise: Promise<unknown>): Promise<LatchkeyError> {
  const error: unknown = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!isLatchkeyError(error)) throw new Error(`expected a LatchkeyError, got ${String(error)}`);
  return error;
}

describe.each(testDatabaseKinds())("user fields at a provider's signup, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let dummy: ConfiguredProvider;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({
      kind,
      userFields: TEST_USER_FIELDS,
      projectMigrations: TEST_USER_FIELD_MIGRATIONS,
      socialAdapter: (settings) => new CompanyFromProvider(settings),
      settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders(), ACCOUNT_SIGNUP_FIELDS: ['email*', 'username*', 'password1*', 'company', 'birth_date*'] },
    });
    dummy = (await latchkey.deps.providerDirectory.provider('dummy'))!;
  }

  it('signs up at once when populateUser gives every required field a value its rules accept', async () => {
    await setUp();
    const result = await finishProviderLogin(latchkey.deps, dummy, { profile: profile({ birthdate: '1815-12-10' }) }, '/', context);
    expect(result.status).toBe('login');
    expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ company: 'Analytical Engines', birth_date: '1815-12-10' });
  });

  it('asks on the form for a required field the provider does not know, with what it did know filled in', async () => {
    await setUp();
    const result = await finishProviderLogin(latchkey.deps, dummy, { profile: profile() }, '/', context);
    if (result.status !== 'signup_form') throw new Error(`expected the signup form, got ${result.status}`);
    expect(await latchkey.users.count()).toBe(0);
    expect(await providerSignupInitial(latchkey.deps, result.signup)).toEqual({ email: 'ada@example.com', username: 'ada', userFields: { company: 'Analytical Engines' } });

    // Every refusal at once: the username, the company and the birth date.
    const refused = await refusalOf(completeProviderSignup(latchkey.deps, dummy, result.signup, { email: 'ada@example.com', username: 'a d a', userFields: { company: 'x'.repeat(101), birth_date: 'soon' } }, context));
    expect(refusalsOf(refused).map((refusal) => [refusal.param, refusal.message])).toEqual([
      ['username', expect.stringContaining('Enter a valid username') as string],
      ['company', 'Ensure this value has at most 100 characters (it has 101).'],
      ['birth_date', 'Enter a valid date.'],
    ]);
    expect(await latchkey.users.count()).toBe(0);

    const done = await completeProviderSignup(latchkey.deps, dummy, result.signup, { email: 'ada@example.com', username: 'ada', userFields: { company: 'Engines', birth_date: '1815-12-10' } }, context);
    expect(done.status).toBe('login');
    expect(await latchkey.users.findByEmail('ada@example.com')).toMatchObject({ company: 'Engines', birth_date: '1815-12-10', plan: '' });
  });
});
