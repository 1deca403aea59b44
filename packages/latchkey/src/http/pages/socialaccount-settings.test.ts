/**
 * The social sign-in settings as a person meets them on the pages, on every database, through the
 * dummy provider (no network): SOCIALACCOUNT_LOGIN_ON_GET, SOCIALACCOUNT_EMAIL_VERIFICATION against
 * the account setting, and the provider settings VERIFIED_EMAIL and EMAIL_AUTHENTICATION, set for
 * the whole provider or for one app (an app's own settings win).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { answerDummyPage, DUMMY_LOGIN, dummyPageOf, dummyProviders, throughDummy, visitCallback, type DummyAnswer } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { urlFor } from '../../config/url-names.js';

const LOGIN_ERROR_PAGE = urlFor('socialaccount_login_error');
const PROVIDER_SIGNUP_PAGE = urlFor('socialaccount_signup');

const PASSWORD = 'a long enough passphrase';
/** Ada at the provider, which does not vouch for her address. */
const ADA_UNVERIFIED: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: '', name: 'Ada Lovelace' };
/** Ada at the provider, which vouches for her address. */
const ADA_VERIFIED: DummyAnswer = { ...ADA_UNVERIFIED, email_verified: 'true' };

/** Two dummy apps told apart by provider_id, one with settings of its own. */
const trustingAndDoubting = (doubting: Record<string, unknown>) => [
  { provider_id: 'trusting', client_id: 'trusting', name: 'Trusting' },
  { provider_id: 'doubting', client_id: 'doubting', name: 'Doubting', settings: doubting },
];
const loginOf = (providerId: string) => ({ login: `/accounts/${providerId}/login/` });

/** A login stopped until the address is confirmed: the pages say a link was sent. */
function expectVerificationSent(response: { statusCode: number; body: string }): void {
  expect(response.statusCode).toBe(200);
  expect(response.body).toContain('We have sent an email to verify your address.');
}

describe.each(testDatabaseKinds())('social sign-in settings on the pages, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues>): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders(), ...settings } });
    browser = await PageClient.create(latchkey);
  }

  const sessionUserOf = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const addressesOf = async (email: string) => latchkey.deps.store.emailAddresses.listForUser((await latchkey.deps.store.users.findByEmail(email))!.id);

  describe('SOCIALACCOUNT_LOGIN_ON_GET', () => {
    it('off (the default): a GET only shows the button, and sends the browser nowhere', async () => {
      await setUp({});
      const asked = await browser.get(`${DUMMY_LOGIN}?next=/accounts/email/`);
      expect(asked.statusCode).toBe(200);
      expect(asked.headers.location).toBeUndefined();
      expect(asked.body).toContain(`<form method="post" action="${DUMMY_LOGIN}"`);
    });

    it('on: a GET starts the sign-in, keeping its next, and refuses an unknown process as the POST does', async () => {
      await setUp({ SOCIALACCOUNT_LOGIN_ON_GET: true });
      const page = dummyPageOf(await browser.get(`${DUMMY_LOGIN}?next=/accounts/email/`));
      expect(page.searchParams.get('redirect_uri')).toBe('http://testserver/accounts/dummy/login/callback/');
      const answered = await visitCallback(browser, await answerDummyPage(browser, page, ADA_VERIFIED));
      expect(answered.headers.location).toBe('/accounts/email/');
      expect(await sessionUserOf(browser)).toBe((await latchkey.deps.store.users.findByEmail('ada@example.com'))!.id);

      const stranger = browser.another();
      expect((await stranger.get(`${DUMMY_LOGIN}?process=steal`)).headers.location).toBe(LOGIN_ERROR_PAGE);
      expect((await stranger.post(DUMMY_LOGIN, { process: 'steal' })).headers.location).toBe(LOGIN_ERROR_PAGE);
    });
  });

  describe('SOCIALACCOUNT_EMAIL_VERIFICATION', () => {
    it('mandatory for social signups while the account setting is optional: the provider’s unvouched address is confirmed first', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'optional', SOCIALACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
      expectVerificationSent(await throughDummy(browser, ADA_UNVERIFIED));
      expect(await sessionUserOf(browser)).toBeNull();
      expect(await addressesOf('ada@example.com')).toMatchObject([{ verified: false }]);
      expect(latchkey.mailer.lastTo('ada@example.com')).toBeDefined();

      // A local signup on the same site follows the account setting: signed in at once.
      const local = browser.another();
      const signedUp = await local.post('/accounts/signup/', { email: 'grace@example.com', username: 'grace', password1: PASSWORD, password2: PASSWORD });
      expect(signedUp.statusCode).toBe(302);
      expect(await sessionUserOf(local)).toBe((await latchkey.deps.store.users.findByEmail('grace@example.com'))!.id);
    });

    it('none for social signups while the account setting is mandatory: signed in at once, nothing mailed', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_EMAIL_VERIFICATION: 'none' });
      expect((await throughDummy(browser, ADA_UNVERIFIED)).headers.location).toBe('/');
      const ada = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
      expect(await sessionUserOf(browser)).toBe(ada.id);
      expect(await addressesOf('ada@example.com')).toMatchObject([{ verified: false }]);
      expect(latchkey.mailer.outbox).toEqual([]);
    });
  });

  describe('VERIFIED_EMAIL', () => {
    it('for the provider: its addresses count as verified; an app’s own setting overrides it', async () => {
      await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: dummyProviders({ VERIFIED_EMAIL: true }, trustingAndDoubting({ verified_email: false })) });
      expect((await throughDummy(browser, ADA_UNVERIFIED, loginOf('trusting'))).headers.location).toBe('/');
      expect(await addressesOf('ada@example.com')).toMatchObject([{ email: 'ada@example.com', verified: true }]);
      expect(latchkey.mailer.outbox).toEqual([]);

      const other = browser.another();
      const grace = { id: 'grace-1906', email: 'grace@example.com', email_verified: '', name: 'Grace Hopper' } as const;
      expectVerificationSent(await throughDummy(other, grace, loginOf('doubting')));
      expect(await addressesOf('grace@example.com')).toMatchObject([{ verified: false }]);
      expect(await sessionUserOf(other)).toBeNull();
    });
  });

  describe('EMAIL_AUTHENTICATION', () => {
    async function withLocalAda(providers: SettingValues['SOCIALACCOUNT_PROVIDERS'], settings: Partial<SettingValues> = {}) {
      await setUp({ ...settings, SOCIALACCOUNT_PROVIDERS: providers });
      return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    }

    it('for the provider: its vouched-for address signs in to the local account; an app that turns it off asks for the signup form', async () => {
      const ada = await withLocalAda(dummyProviders({ EMAIL_AUTHENTICATION: true }, trustingAndDoubting({ email_authentication: false })));
      expect((await throughDummy(browser, ADA_VERIFIED, loginOf('trusting'))).headers.location).toBe('/');
      expect(await sessionUserOf(browser)).toBe(ada.id);

      const other = browser.another();
      expect((await throughDummy(other, ADA_VERIFIED, loginOf('doubting'))).headers.location).toBe(PROVIDER_SIGNUP_PAGE);
      expect(await sessionUserOf(other)).toBeNull();
      expect(await latchkey.deps.store.users.count()).toBe(1);
    });

    it('off for the provider despite the global setting, unless an app turns it on', async () => {
      const ada = await withLocalAda(dummyProviders({ EMAIL_AUTHENTICATION: false }, trustingAndDoubting({ email_authentication: true })), { SOCIALACCOUNT_EMAIL_AUTHENTICATION: true });
      expect((await throughDummy(browser, ADA_VERIFIED, loginOf('trusting'))).headers.location).toBe(PROVIDER_SIGNUP_PAGE);
      expect(await sessionUserOf(browser)).toBeNull();

      const other = browser.another();
      expect((await throughDummy(other, ADA_VERIFIED, loginOf('doubting'))).headers.location).toBe('/');
      expect(await sessionUserOf(other)).toBe(ada.id);
    });

    it('never for an address the provider does not vouch for, even where it is on', async () => {
      await withLocalAda(dummyProviders({ EMAIL_AUTHENTICATION: true }));
      expect((await throughDummy(browser, ADA_UNVERIFIED)).headers.location).toBe(PROVIDER_SIGNUP_PAGE);
      expect(await sessionUserOf(browser)).toBeNull();
    });
  });
});
