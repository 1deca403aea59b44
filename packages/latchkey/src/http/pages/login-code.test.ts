/**
 * The "Mail me a sign-in code" pages: /accounts/login/code/ and /accounts/login/code/confirm/.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { observeAnswersAndMail } from '../../testing/answer-order.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { activateTotpFor } from '../../testing/mfa.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

describe.each(testDatabaseKinds())('login by code pages on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}, verified = true): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true, ...settings } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: verified });
  }

  async function mailedCode(): Promise<string> {
    await latchkey.deps.background.idle();
    const code = /\n([A-Z0-9]{6})\n/.exec(latchkey.mailer.lastTo('ada@example.com')?.text ?? '')?.[1];
    if (code === undefined) throw new Error('no code was mailed');
    return code;
  }

  const signedInUser = async (client = browser) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId ?? null;
  const wrongFor = (code: string): string => (code === 'AAAAAA' ? 'BBBBBB' : 'AAAAAA');

  it('links to it from the login page, and signs in with the mailed code, to next', async () => {
    await setUp({ ACCOUNT_EMAIL_VERIFICATION: 'mandatory' }, false);
    expect((await browser.get('/accounts/login/?next=/accounts/email/')).body).toContain('href="/accounts/login/code/?next=%2Faccounts%2Femail%2F"');
    const form = await browser.get('/accounts/login/code/');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="email"');
    const requested = await browser.post('/accounts/login/code/', { email: 'ada@example.com', next: '/accounts/email/' });
    expect(requested.statusCode).toBe(302);
    expect(requested.headers.location).toBe('/accounts/login/code/confirm/?next=%2Faccounts%2Femail%2F');
    const confirmPage = await browser.get(requested.headers.location!);
    expect(confirmPage.body).toContain('name="code"');
    const confirmed = await browser.post('/accounts/login/code/confirm/', { code: await mailedCode(), next: '/accounts/email/' });
    expect(confirmed.statusCode).toBe(302);
    expect(confirmed.headers.location).toBe('/accounts/email/');
    expect(await signedInUser()).toBe(ada.id);
    // The code proved the mailbox: the address is verified now.
    expect((await latchkey.deps.store.emailAddresses.listForUser(ada.id))[0]!.verified).toBe(true);
  });

  it('answers an unknown address with the same redirect and page, and mails nothing', async () => {
    await setUp();
    const other = browser.another();
    const known = await browser.post('/accounts/login/code/', { email: 'ada@example.com' });
    const unknown = await other.post('/accounts/login/code/', { email: 'nobody@example.com' });
    expect(unknown.statusCode).toBe(known.statusCode);
    expect(unknown.headers.location).toBe(known.headers.location);
    const knownPage = (await browser.get('/accounts/login/code/confirm/')).body;
    const unknownPage = (await other.get('/accounts/login/code/confirm/')).body;
    const strip = (body: string) => body.replace(/value="[^"]*"/g, '').replace(/ada@example\.com|nobody@example\.com/g, 'ADDRESS');
    expect(strip(unknownPage)).toBe(strip(knownPage));
    await latchkey.deps.background.idle();
    expect(latchkey.mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
  });

  it('sends its answer before the account is looked up and mailed, though the page still writes the session after the flow', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_BY_CODE_ENABLED: true } });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const order = observeAnswersAndMail(latchkey);
    // Added in Latchkey's own scope, where the pages are, so that it sees their answers.
    browser = await PageClient.create(latchkey, { plugin: { routes: (scope) => void scope.addHook('onResponse', order.recordAnswer) } });
    expect((await browser.post('/accounts/login/code/', { email: 'ada@example.com' })).statusCode).toBe(302);
    // The mail is what only an existing account costs: started before the answer, it would slow that answer alone.
    expect(order.events.filter((event) => !event.startsWith('answered GET'))).toEqual(['answered POST /accounts/login/code/', 'mail to ada@example.com']);
  });

  it('refuses a wrong code, and drops the login after MAX_ATTEMPTS wrong ones', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: 2 });
    await browser.post('/accounts/login/code/', { email: 'ada@example.com' });
    const code = await mailedCode();
    const first = await browser.post('/accounts/login/code/confirm/', { code: wrongFor(code) });
    expect(first.statusCode).toBe(400);
    expect(first.body).toContain('Incorrect code.');
    const last = await browser.post('/accounts/login/code/confirm/', { code: wrongFor(code) });
    expect(last.headers.location).toBe('/accounts/login/code/');
    const again = await browser.post('/accounts/login/code/confirm/', { code });
    expect(again.headers.location).toBe('/accounts/login/code/');
    expect(await signedInUser()).toBeNull();
  });

  it('does not take a code in another browser, nor twice, nor after it expired', async () => {
    await setUp({ ACCOUNT_LOGIN_BY_CODE_TIMEOUT: 180 });
    await browser.post('/accounts/login/code/', { email: 'ada@example.com' });
    const code = await mailedCode();
    const other = browser.another();
    const elsewhere = await other.post('/accounts/login/code/confirm/', { code });
    expect(elsewhere.headers.location).toBe('/accounts/login/code/');
    expect(await signedInUser(other)).toBeNull();

    latchkey.clock.advance(180_000);
    expect((await browser.post('/accounts/login/code/confirm/', { code })).headers.location).toBe('/accounts/login/code/');
    expect(await signedInUser()).toBeNull();

    await browser.post('/accounts/login/code/', { email: 'ada@example.com' });
    const fresh = await mailedCode();
    expect((await browser.post('/accounts/login/code/confirm/', { code: fresh })).statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
    await browser.post('/accounts/logout/', {});
    expect((await browser.post('/accounts/login/code/confirm/', { code: fresh })).headers.location).toBe('/accounts/login/code/');
    expect(await signedInUser()).toBeNull();
  });

  it('asks for the second factor after the code', async () => {
    await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    await browser.post('/accounts/login/code/', { email: 'ada@example.com' });
    const stopped = await browser.post('/accounts/login/code/confirm/', { code: await mailedCode() });
    expect(stopped.headers.location).toBe('/accounts/2fa/authenticate/');
    expect(await signedInUser()).toBeNull();
    expect((await browser.post('/accounts/2fa/authenticate/', { code: totp.code() })).statusCode).toBe(302);
    expect(await signedInUser()).toBe(ada.id);
  });

  it('is off by default: no link, no page', async () => {
    latchkey = await createTestLatchkey({ kind });
    browser = await PageClient.create(latchkey);
    expect((await browser.get('/accounts/login/')).body).not.toContain('/accounts/login/code/');
    expect((await browser.get('/accounts/login/code/')).statusCode).toBe(404);
  });
});
