/**
 * The social adapter's hooks as a project overrides them (docs/extending.md, "The adapters"),
 * through the pages and the headless API, with allauth's dummy provider, on every database:
 * SocialAccountAdapter.preSocialLogin (allauth's pre_social_login: refuse, or connect to an
 * existing user) and getConnectRedirectUrl (allauth's get_connect_redirect_url).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../account/model.js';
import { LatchkeyError } from '../core/errors.js';
import { SocialAccountAdapter, type SocialLoginAttempt, type SocialLoginDecision, type SocialLoginUsers } from '../socialaccount/adapter.js';
import type { SocialAccount } from '../socialaccount/model.js';
import { testDatabaseKinds } from '../testing/database.js';
import { answerDummyPage, dummyPageOf, dummyProviders, throughDummy, visitCallback, type DummyAnswer } from '../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const BANNED: DummyAnswer = { id: 'banned-1', email: 'mallory@example.com', email_verified: 'true', name: 'Mallory' };
const ADA: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' };

/**
 * Refuses one provider account everywhere; connects a new provider account to the local account
 * whose verified address the provider vouches for; sends a connect to the project's own page.
 */
class ProjectSocialAdapter extends SocialAccountAdapter {
  readonly attempts: SocialLoginAttempt[] = [];

  override async preSocialLogin(attempt: SocialLoginAttempt, users: SocialLoginUsers): Promise<SocialLoginDecision | undefined> {
    this.attempts.push(attempt);
    if (attempt.uid === BANNED.id) throw new LatchkeyError('permission_denied', 'This account may not be used here.');
    if (attempt.process !== 'login' || attempt.connectedUser) return undefined;
    const vouched = attempt.emails.find((address) => address.verified);
    const owner = vouched && (await users.withVerifiedEmail(vouched.email));
    return owner ? { connectTo: owner } : undefined;
  }

  override getConnectRedirectUrl(account: SocialAccount): string {
    return `/profile/connected/${account.provider}/`;
  }
}

describe.each(testDatabaseKinds())("the social adapter's hooks, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let adapter: ProjectSocialAdapter;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({
      kind,
      settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders(), ACCOUNT_EMAIL_VERIFICATION: 'optional' },
      socialAdapter: (settings) => {
        adapter = new ProjectSocialAdapter(settings);
        return adapter;
      },
    });
    browser = await PageClient.create(latchkey, { plugin: { headless: true } });
  }

  async function signIn(who: PageClient, username: string): Promise<User> {
    const user = await latchkey.users.create({ username, email: `${username}@home.example`, password: PASSWORD, emailVerified: true });
    expect((await who.post('/accounts/login/', { login: username, password: PASSWORD })).statusCode).toBe(302);
    return user;
  }

  it('preSocialLogin: a refused login through the pages signs nobody in or up and shows its message', async () => {
    await setUp();
    const refused = await throughDummy(browser, BANNED);
    expect(refused.headers.location).toBe('/accounts/3rdparty/login/error/');
    expect((await browser.get(refused.headers.location!)).body).toContain('This account may not be used here.');
    expect(await latchkey.users.count()).toBe(0);
    expect(await latchkey.deps.store.socialAccounts.find('dummy', BANNED.id)).toBeUndefined();
    expect(adapter.attempts.at(-1)).toMatchObject({ provider: 'dummy', uid: BANNED.id, process: 'login', emails: [{ email: BANNED.email, verified: true, primary: true }] });
  });

  it('preSocialLogin: a refused connect connects nothing and says why on the connections page', async () => {
    await setUp();
    const grace = await signIn(browser, 'grace');
    const refused = await throughDummy(browser, BANNED, { fields: { process: 'connect' } });
    expect(refused.headers.location).toBe('/accounts/3rdparty/');
    expect((await browser.get('/accounts/3rdparty/')).body).toContain('This account may not be used here.');
    expect(await latchkey.socialAccounts.listForUser(grace)).toEqual([]);
    expect(adapter.attempts.at(-1)).toMatchObject({ process: 'connect', requester: { id: grace.id } });
  });

  it("preSocialLogin: a refused sign-in a front end started returns there with the refusal's code", async () => {
    await setUp();
    const started = await browser.post('/_allauth/browser/v1/auth/provider/redirect', { provider: 'dummy', process: 'login', callback_url: '/spa/callback' });
    const back = await visitCallback(browser, await answerDummyPage(browser, dummyPageOf(started), BANNED));
    expect(back.headers.location).toBe('/spa/callback?error=permission_denied&error_process=login');
    expect(await latchkey.users.count()).toBe(0);
  });

  it('preSocialLogin: { connectTo } connects a new provider account to an existing user and signs in as them, who is told', async () => {
    await setUp();
    const ada = await latchkey.users.create({ username: 'ada', email: ADA.email!, password: PASSWORD, emailVerified: true });
    const signedIn = await throughDummy(browser, ADA);
    expect(signedIn.statusCode).toBe(302);
    expect((await browser.get('/_allauth/browser/v1/auth/session')).body).toContain(`"id":${ada.id}`);
    expect(await latchkey.users.count()).toBe(1);
    expect(await latchkey.socialAccounts.listForUser(ada)).toMatchObject([{ provider: 'dummy', uid: ADA.id }]);
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toContainEqual([ADA.email]);
    // Next time the provider account is the user's own: no decision asked for.
    const again = browser.another();
    await throughDummy(again, ADA);
    expect(adapter.attempts.at(-1)).toMatchObject({ process: 'login', connectedUser: { id: ada.id } });
  });

  it('getConnectRedirectUrl: where a connect without `next` lands; a `next` of its own still wins', async () => {
    await setUp();
    await signIn(browser, 'grace');
    expect((await throughDummy(browser, { ...ADA, email: 'grace@work.example' }, { fields: { process: 'connect' } })).headers.location).toBe('/profile/connected/dummy/');
    const other = browser.another();
    await signIn(other, 'hopper');
    const withNext = await throughDummy(other, { id: 'hopper-1906', email: 'hopper@work.example', email_verified: 'true' }, { fields: { process: 'connect', next: '/settings/' } });
    expect(withNext.headers.location).toBe('/settings/');
  });
});
