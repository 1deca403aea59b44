/**
 * The adapters' hook points as a project overrides them (docs/extending.md, "The adapters"): each
 * override changes what a person sees through the pages, on every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AccountAdapter, type MailToRender, type PasswordOwner, type RenderTemplate } from '../../account/adapter.js';
import { LatchkeyError } from '../../core/errors.js';
import type { User } from '../../account/model.js';
import type { EmailMessage } from '../../mail/ports.js';
import { SocialAccountAdapter } from '../../socialaccount/adapter.js';
import type { SocialLogin } from '../../socialaccount/adapter.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { dummyProviders, throughDummy, type DummyAnswer } from '../../testing/dummy-sign-in.js';
import { createTestLatchkey, type TestLatchkey, type TestLatchkeyOptions } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';
const ADA: DummyAnswer = { id: 'ada-1815', email: 'ada@example.com', email_verified: 'true', name: 'Ada Lovelace' };

let shopOpen = true;

/** A project's adapter overriding every account hook this file checks. */
class ProjectAdapter extends AccountAdapter {
  override getLoginRedirectUrl(user: User): string {
    return `/welcome/${user.id}/`;
  }

  override getLogoutRedirectUrl(): string {
    return '/goodbye/';
  }

  override formatEmailSubject(subject: string): string {
    return `(Shop) ${subject}`;
  }

  override renderMail(mail: MailToRender, render: RenderTemplate): EmailMessage {
    return { ...super.renderMail(mail, render), headers: { 'Reply-To': 'help@shop.example' } };
  }

  override cleanPassword(password: string, owner: PasswordOwner): string {
    if (password.toLowerCase().includes('shop')) throw new LatchkeyError('password_invalid', `A password must not name the shop, ${owner.username ?? owner.email}.`);
    return password;
  }

  /** Signup is open only while the shop is (a flag the project keeps). */
  override isOpenForSignup(): boolean {
    return shopOpen;
  }

  override cleanEmail(email: string): string {
    if (email.endsWith('@competitor.example')) throw new LatchkeyError('invalid_email', 'Use an address of your own.', { param: 'email' });
    return email;
  }

  override cleanUsername(username: string): string {
    if (username.startsWith('shop')) throw new LatchkeyError('invalid_username', 'Names starting with "shop" are ours.', { param: 'username' });
    return username;
  }

  override getEmailConfirmationUrl(key: string): string {
    return `https://app.shop.example/verify?key=${encodeURIComponent(key)}`;
  }
}

/** A social adapter that signs up at once only people from one provider account. */
class ChoosySocialAdapter extends SocialAccountAdapter {
  override isAutoSignupAllowed(login: SocialLogin): boolean {
    return login.uid === 'grace-1906';
  }
}

describe.each(testDatabaseKinds())("the adapters' hook points through the pages, on %s", (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(options: Partial<TestLatchkeyOptions> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, adapter: (settings) => new ProjectAdapter(settings), ...options });
    browser = await PageClient.create(latchkey);
  }

  async function signIn(): Promise<User> {
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe(`/welcome/${ada.id}/`);
    return ada;
  }

  it('getLoginRedirectUrl: where a login without `next` lands, and where the login page sends a signed-in person', async () => {
    await setUp();
    const ada = await signIn();
    expect((await browser.get('/accounts/login/')).headers.location).toBe(`/welcome/${ada.id}/`);
    expect((await browser.get('/accounts/signup/')).headers.location).toBe(`/welcome/${ada.id}/`);
    // A `next` of the person's own still wins.
    expect((await browser.get('/accounts/login/?next=/orders/')).headers.location).toBe('/orders/');
  });

  it('getLogoutRedirectUrl: where the logout sends a person, signed in or not', async () => {
    await setUp();
    await signIn();
    expect((await browser.post('/accounts/logout/', {})).headers.location).toBe('/goodbye/');
    expect((await browser.get('/accounts/logout/')).headers.location).toBe('/goodbye/');
  });

  it('formatEmailSubject and renderMail: every account mail gets the subject and the header the project gives', async () => {
    await setUp();
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    await latchkey.deps.background.idle();
    const [mail] = latchkey.mailer.outbox;
    expect(mail?.subject).toBe('(Shop) Password reset');
    expect(mail?.headers).toMatchObject({ 'Reply-To': 'help@shop.example' });
  });

  it('getEmailConfirmationUrl: the link the confirmation mail carries, which confirms the address', async () => {
    await setUp({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    await browser.post('/accounts/signup/', { username: 'ada', email: 'ada@example.com', password1: PASSWORD, password2: PASSWORD });
    const [mail] = latchkey.mailer.outbox;
    const link = /https:\/\/app\.shop\.example\/verify\?key=([^\s"<]+)/.exec(mail?.text ?? '');
    expect(link, mail?.text).not.toBeNull();
    const key = decodeURIComponent(link![1]!);
    const confirmPage = await browser.get(`/accounts/confirm-email/${encodeURIComponent(key)}/`);
    expect(confirmPage.statusCode).toBe(200);
    await browser.post(`/accounts/confirm-email/${encodeURIComponent(key)}/`, {});
    expect((await latchkey.emailAddresses.findVerified('ada@example.com'))?.email).toBe('ada@example.com');
  });

  it('cleanPassword: refuses at signup and at a change what the validators let through, on the password field, storing nothing', async () => {
    await setUp();
    const refused = await browser.post('/accounts/signup/', { username: 'ada', email: 'ada@example.com', password1: 'my shop passphrase', password2: 'my shop passphrase' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('A password must not name the shop, ada.');
    expect(await latchkey.users.count()).toBe(0);
    await signIn();
    const change = await browser.post('/accounts/password/change/', { oldpassword: PASSWORD, password1: 'another shop phrase', password2: 'another shop phrase' });
    expect(change.statusCode).toBe(400);
    expect(change.body).toContain('A password must not name the shop, ada.');
    expect(await latchkey.users.checkPassword('ada', PASSWORD)).toBeDefined();
  });

  it('isOpenForSignup, cleanEmail and cleanUsername: the signup form closes, and refuses an address or a name on its field, storing nothing', async () => {
    await setUp();
    const signUp = (username: string, email: string) => browser.post('/accounts/signup/', { username, email, password1: PASSWORD, password2: PASSWORD });
    const address = await signUp('ada', 'ada@competitor.example');
    expect(address.statusCode).toBe(400);
    expect(address.body).toContain('Use an address of your own.');
    const name = await signUp('shopkeeper', 'ada@example.com');
    expect(name.statusCode).toBe(400);
    expect(name.body).toContain('Names starting with &quot;shop&quot; are ours.');
    expect(await latchkey.users.count()).toBe(0);
    shopOpen = false;
    try {
      expect((await browser.get('/accounts/signup/')).body).toContain('the sign up is currently closed');
      expect((await signUp('ada', 'ada@example.com')).statusCode).toBe(403);
      expect(await latchkey.users.count()).toBe(0);
    } finally {
      shopOpen = true;
    }
  });

  it('isAutoSignupAllowed: a person it allows is signed up at once, anyone else gets the signup form', async () => {
    await setUp({ settings: { SOCIALACCOUNT_PROVIDERS: dummyProviders() }, socialAdapter: (settings) => new ChoosySocialAdapter(settings) });
    const ada = await throughDummy(browser, ADA);
    expect(ada.headers.location).toBe('/accounts/3rdparty/signup/');
    expect(await latchkey.users.count()).toBe(0);
    const other = await PageClient.create(latchkey);
    try {
      const grace = await throughDummy(other, { id: 'grace-1906', email: 'grace@example.com', email_verified: 'true', name: 'Grace Hopper' });
      const created = await latchkey.users.findByEmail('grace@example.com');
      expect(grace.headers.location).toBe(`/welcome/${created!.id}/`);
    } finally {
      await other.close();
    }
  });
});
