/**
 * Attacks on email management: adding an address another account has, CSRF on every action,
 * concurrent adds, and account pre-hijacking by an unverified claim.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

const PASSWORD = 'a long enough passphrase';

/** The path of the confirmation link in the last mail to `address`. */
function linkTo(latchkey: TestLatchkey, address: string): string {
  const match = /http:\/\/testserver(\/accounts\/confirm-email\/[^/\s]+\/)/.exec(latchkey.mailer.lastTo(address)?.text ?? '');
  if (!match) throw new Error(`no confirmation link was mailed to ${address}`);
  return match[1]!;
}

describe.each(testDatabaseKinds())('email management under attack on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp() {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional' } });
    browser = await PageClient.create(latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
  }
  const addresses = () => latchkey.deps.store.emailAddresses.listForUser(ada.id);

  it("adding another account's verified address reads like any add, in the list and on resend; the holder is told, never sent a link", async () => {
    await setUp();
    await createUser(latchkey.deps, { username: 'owner', email: 'owner@example.com', password: PASSWORD, emailVerified: true });
    const free = await browser.post('/accounts/email/', { email: 'free@example.com', action_add: '' });
    const freePage = (await browser.get('/accounts/email/')).body;
    const taken = await browser.post('/accounts/email/', { email: 'OWNER@example.com', action_add: '' });
    const takenPage = (await browser.get('/accounts/email/')).body;
    expect({ status: taken.statusCode, location: taken.headers.location }).toEqual({ status: free.statusCode, location: free.headers.location });
    expect(freePage).toContain('Confirmation email sent to free@example.com.');
    expect(takenPage).toContain('Confirmation email sent to owner@example.com.');

    // Both are listed the same way: unverified, with a button to send the link again.
    expect((await addresses()).map((address) => [address.email, address.verified])).toEqual([
      ['ada@example.com', true],
      ['free@example.com', false],
      ['owner@example.com', false],
    ]);
    const row = (name: string) =>
      takenPage
        .split('<tr')
        .find((chunk) => chunk.includes(`value="${name}"`))
        ?.split('</tr>')[0]
        ?.replaceAll(name, '<address>')
        .replace(/email_radio_\d+/g, 'email_radio_n');
    expect(row('owner@example.com')).toEqual(row('free@example.com'));
    latchkey.clock.advance(3 * 60 * 1000 + 1000);
    const resendFree = await browser.post('/accounts/email/', { email: 'free@example.com', action_send: '' });
    const resendTaken = await browser.post('/accounts/email/', { email: 'owner@example.com', action_send: '' });
    expect({ status: resendTaken.statusCode, location: resendTaken.headers.location }).toEqual({ status: resendFree.statusCode, location: resendFree.headers.location });
    // The holder's address never receives a confirmation link, only the notice.
    const toOwner = latchkey.mailer.outbox.filter((mail) => mail.to.includes('owner@example.com'));
    expect(toOwner).toHaveLength(1);
    expect(toOwner[0]!.text).toContain('tried to add owner@example.com to an account');
    expect(toOwner[0]!.text).not.toContain('confirm-email');
    // And it can never be confirmed for this account: the holder keeps it.
    expect(await latchkey.deps.store.emailAddresses.findVerified('owner@example.com')).toMatchObject({ verified: true });
  });

  it('every action without a CSRF token, or with another browser\'s, is refused and changes nothing', async () => {
    await setUp();
    await latchkey.deps.store.emailAddresses.add({ userId: ada.id, email: 'second@example.com', verified: true, primary: false });
    const other = browser.another();
    await other.get('/accounts/login/');
    const before = await addresses();
    for (const action of ['action_add', 'action_send', 'action_remove', 'action_primary']) {
      const email = action === 'action_add' ? 'new@example.com' : 'second@example.com';
      expect((await browser.post('/accounts/email/', { email, [action]: '' }, { csrf: false })).statusCode).toBe(403);
      const foreign = await browser.post('/accounts/email/', { email, [action]: '', csrfmiddlewaretoken: other.cookies.get('csrftoken')! }, { csrf: false });
      expect(foreign.statusCode).toBe(403);
    }
    expect(await addresses()).toEqual(before);
    expect(latchkey.mailer.outbox).toHaveLength(0);
  });

  it('two addresses added at once each get a key that confirms only that address', async () => {
    await setUp();
    const [first, second] = await Promise.all([
      browser.post('/accounts/email/', { email: 'one@example.com', action_add: '' }),
      browser.post('/accounts/email/', { email: 'two@example.com', action_add: '' }),
    ]);
    expect([first.statusCode, second.statusCode]).toEqual([302, 302]);
    const one = linkTo(latchkey, 'one@example.com');
    const two = linkTo(latchkey, 'two@example.com');
    expect(one).not.toBe(two);

    // The two rows may be stored in either order: read each by its address.
    const verified = async (email: string) => (await latchkey.deps.store.emailAddresses.findForUser(ada.id, email))?.verified;
    expect((await browser.post(one, {})).statusCode).toBe(302);
    expect([await verified('one@example.com'), await verified('two@example.com')]).toEqual([true, false]);
    // Used once, it confirms nothing more.
    expect((await browser.post(one, {})).statusCode).toBe(404);
    expect(await verified('two@example.com')).toBe(false);
    expect((await browser.post(two, {})).statusCode).toBe(302);
    expect(await verified('two@example.com')).toBe(true);
    expect(await addresses()).toHaveLength(3);
  });

  it("an attacker's unverified claim on the victim's address dies, with its password and sessions, when the victim confirms it", async () => {
    await setUp();
    const attacker = browser.another();
    const signup = await attacker.post('/accounts/signup/', { username: 'mallory', email: 'victim@example.com', password1: PASSWORD, password2: PASSWORD });
    expect(signup.statusCode).toBe(302);
    const mallory = (await latchkey.deps.store.users.findByUsername('mallory'))!;
    expect((await attacker.get('/accounts/email/')).statusCode).toBe(200);

    // The victim (ada, signed in in `browser`) adds the address, which is only claimed elsewhere,
    // once the attacker's confirmation mail no longer holds the address's confirm_email limit.
    latchkey.clock.advance(3 * 60 * 1000);
    expect((await browser.post('/accounts/email/', { email: 'victim@example.com', action_add: '' })).statusCode).toBe(302);
    const link = linkTo(latchkey, 'victim@example.com');
    expect(await latchkey.deps.store.emailAddresses.listByEmail('victim@example.com')).toHaveLength(2);
    // A fresh browser with only the link, as the victim opening the mail elsewhere.
    const mail = browser.another();
    expect((await mail.get(link)).body).toContain('victim@example.com');
    expect((await mail.post(link, {})).headers.location).toBe('/accounts/login/');

    expect(await latchkey.deps.store.emailAddresses.listByEmail('victim@example.com')).toMatchObject([{ userId: ada.id, verified: true }]);
    expect((await attacker.get('/accounts/email/')).headers.location).toMatch(/^\/accounts\/login\//);
    expect(await latchkey.deps.sessions.listForUser(mallory.id)).toHaveLength(0);
    const login = await browser.another().post('/accounts/login/', { login: 'mallory', password: PASSWORD });
    expect(login.statusCode).toBe(400);
  });
});
