/**
 * SAML sign-in on the pages under attack, on every database, against the test IdP: forged,
 * wrapped, replayed, misdirected and stale responses, unsolicited ones, open redirects through
 * RelayState, and garbage. Each refused one ends on the login error page with nobody signed in, no
 * account created, and its reason in the log at warn; the few that sign someone in sign in exactly
 * the person the signature vouches for.
 */
import Fastify, { type LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { openLatchkey } from '../../latchkey.js';
import { MemoryMailer } from '../../mail/index.js';
import { openDatabase } from '../../storage/database.js';
import { sessionUserOf } from '../../testing/corp-sso.js';
import { createTestDatabase, testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import { unsigned, withCommentInNameId, XSW_ATTACKS } from '../../testing/saml-attacks.js';
import { startTestSamlIdp, type SamlPerson, type TestSamlIdp } from '../../testing/saml-idp.js';
import { createTestKeyPair } from '../../testing/saml-keys.js';
import { postToAcs, responseFor, samlApp, samlSiteUrls, startSignIn } from '../../testing/saml-sign-in.js';

const ERROR_PAGE = '/accounts/3rdparty/login/error/';
const EMAIL = 'urn:oid:0.9.2342.19200300.100.1.3';
const VERIFIED = 'http://schemas.auth0.com/email_verified';
const MALLORY: SamlPerson = { nameId: 'mallory@example.com', attributes: { [EMAIL]: 'mallory@example.com', [VERIFIED]: 'true' } };
const VICTIM: SamlPerson = { nameId: 'victim@example.com', attributes: { [EMAIL]: 'victim@example.com', [VERIFIED]: 'true' } };
const UNSOLICITED = { reject_idp_initiated_sso: false };
const MINUTE = 60_000;

let idp: TestSamlIdp;
const spKeys = createTestKeyPair('Latchkey test SP');
const strangerKeys = createTestKeyPair('Not the IdP');
beforeAll(async () => {
  idp = await startTestSamlIdp();
});
afterAll(() => idp.close());

/** A base64 SAMLResponse rewritten as XML by `change` (an attack), base64 again. */
function rewritten(samlResponse: string, change: (xml: string) => string): string {
  return Buffer.from(change(Buffer.from(samlResponse, 'base64').toString('utf8')), 'utf8').toString('base64');
}

describe.each(testDatabaseKinds())('SAML sign-in on the pages, attacked, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let warnings: MockInstance<(fields: object, message: string) => void>[] = [];
  const cleanUps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    warnings = [];
    for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
  });

  /** A Fastify app without a logger gives its requests its own null logger: its warn is what the sign-in calls. */
  const listen = (client: PageClient): void => {
    warnings.push(vi.spyOn(client.app.log, 'warn'));
  };
  /** Every warning logged since the last refusal, a line each: its message, then its reason when it has one. */
  const logged = (): string =>
    warnings.flatMap((warn) => warn.mock.calls.map(([fields, message]) => `${String(message)}: ${String((fields as { reason?: string }).reason ?? '')}`)).join('\n');

  async function setUp(advanced: Record<string, unknown> = {}): Promise<void> {
    const site = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: samlApp(idp, { settings: { advanced } }) } });
    const client = await PageClient.create(site);
    cleanUps.push(() => site.destroy(), () => client.close());
    [latchkey, browser] = [site, client];
    listen(client);
  }

  /** The browser's own sign-in, answered by the IdP for `person` (with `overrides`): our final answer. */
  async function answeredAs(person: SamlPerson, overrides: Parameters<typeof responseFor>[4] = {}, client = browser, change?: (xml: string) => string): Promise<LightMyRequestResponse> {
    const { requestId, relayState } = await startSignIn(client);
    const response = responseFor(latchkey, idp, person, requestId, overrides);
    return postToAcs(client, change ? rewritten(response, change) : response, relayState, { origin: idp.origin });
  }

  /** The login error page, nobody signed in in `client`, no account made beyond `accounts`, and `reason` logged. */
  async function expectRefused(answer: LightMyRequestResponse, reason: string | RegExp, accounts = 0, client = browser): Promise<void> {
    expect(answer.statusCode, answer.body).toBe(302);
    expect(answer.headers.location).toBe(ERROR_PAGE);
    const page = await client.get(ERROR_PAGE);
    expect(page.statusCode).toBe(401);
    expect(page.body).toContain('An error occurred while attempting to sign in via your third-party account.');
    expect((await sessionUserOf(latchkey, client)) ?? null).toBeNull();
    expect(await latchkey.deps.store.users.count()).toBe(accounts);
    expect(await latchkey.deps.store.socialAccounts.countForProvider(idp.entityId)).toBe(accounts);
    expect(logged()).toMatch(reason);
    for (const warn of warnings) warn.mockClear();
  }

  /** Signed in as the social account `uid` of this IdP. */
  async function expectSignedInAs(answer: LightMyRequestResponse, uid: string, client = browser): Promise<void> {
    expect(answer.headers.location, `${answer.statusCode} ${answer.body}`).not.toBe(ERROR_PAGE);
    const account = await latchkey.deps.store.socialAccounts.find(idp.entityId, uid);
    expect(account).toBeDefined();
    expect(await sessionUserOf(latchkey, client)).toBe(account!.userId);
  }

  it('refuses every signature-wrapping variant: the victim named in the wrapper is never signed in', async () => {
    await setUp();
    const victim = browser.another();
    await expectSignedInAs(await answeredAs(VICTIM, {}, victim), VICTIM.nameId, victim);
    for (const attack of XSW_ATTACKS) {
      const answer = await answeredAs(MALLORY, { sign: attack.needs }, browser, (xml) => attack.apply(xml, VICTIM.nameId));
      await expectRefused(answer, /the response was refused: Invalid signature/, 1);
    }
  });

  it('refuses an unsigned assertion, and one signed by another key', async () => {
    await setUp();
    await expectRefused(await answeredAs(MALLORY, { sign: 'none' }), /the response was refused: Invalid signature/);
    await expectRefused(await answeredAs(MALLORY, { sign: 'both' }, browser, unsigned), /the response was refused: Invalid signature/);
    for (const sign of ['assertion', 'response'] as const) {
      await expectRefused(await answeredAs(MALLORY, { sign, signingKey: strangerKeys }), /the response was refused: Invalid signature/);
    }
  });

  it('refuses a response whose status is not Success, though its assertion is validly signed, and signs in the same one with Success', async () => {
    await setUp();
    for (const sign of ['assertion', 'response'] as const) {
      const answer = await answeredAs(VICTIM, { status: 'responder', assertionDespiteStatus: true, sign });
      await expectRefused(answer, /the IdP's status is urn:oasis:names:tc:SAML:2\.0:status:Responder, not Success/);
    }
    await expectRefused(await answeredAs(VICTIM, { status: 'requester', assertionDespiteStatus: true }), /status:Requester \(urn:oasis:names:tc:SAML:2\.0:status:RequestDenied\), not Success/);
    await expectSignedInAs(await answeredAs(VICTIM, { sign: 'response' }), VICTIM.nameId);
  });

  it("signs in a NameID with a comment inside as its whole text's account, never as the local account its first part names", async () => {
    await setUp();
    const alice = browser.another();
    await expectSignedInAs(await answeredAs({ nameId: 'alice@example.com', attributes: { [EMAIL]: 'alice@example.com', [VERIFIED]: 'true' } }, {}, alice), 'alice@example.com', alice);
    const aliceId = (await latchkey.deps.store.socialAccounts.find(idp.entityId, 'alice@example.com'))!.userId;
    const evil = { nameId: 'alice@example.com.evil.test', attributes: { [EMAIL]: 'mallory@evil.test', [VERIFIED]: 'true' } };
    const answer = await answeredAs(evil, {}, browser, (xml) => withCommentInNameId(xml, 'alice@example.com'.length));
    await expectSignedInAs(answer, 'alice@example.com.evil.test');
    expect(await sessionUserOf(latchkey, browser)).not.toBe(aliceId);
    expect(await latchkey.deps.store.socialAccounts.listForUser(aliceId)).toMatchObject([{ uid: 'alice@example.com' }]);
  });

  it('refuses the same response posted twice: the sign-in it answered is over', async () => {
    await setUp();
    const { requestId, relayState } = await startSignIn(browser);
    const response = responseFor(latchkey, idp, MALLORY, requestId);
    await expectSignedInAs(await postToAcs(browser, response, relayState), MALLORY.nameId);
    await browser.post('/accounts/logout/', {});
    for (const client of [browser, browser.another()]) {
      await expectRefused(await postToAcs(client, response, relayState), /unknown, used or expired state/, 1, client);
    }
  });

  it('refuses a replayed IdP-initiated response by its assertion id, on this instance and on another sharing the database', async () => {
    const settings = testSettings({ settings: { SOCIALACCOUNT_PROVIDERS: samlApp(idp, { settings: { advanced: UNSOLICITED } }) } });
    // A file, not memory, on SQLite: the second instance must open the same database.
    const database = await createTestDatabase(kind, settings.USERNAME_TYPE, { sqliteFile: true });
    cleanUps.push(() => database.destroy());
    const clock = new ManualClock();
    const sites: [TestLatchkey, PageClient][] = [];
    for (const opened of [database, await openDatabase(database.openOptions)]) {
      const mailer = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
      const instance = await openLatchkey({ settings, clock, mailer, database: opened, migrations: 'require' });
      const site: TestLatchkey = { ...instance, clock, mailer, destroy: () => instance.close() };
      const client = await PageClient.create(site);
      cleanUps.push(() => site.destroy(), () => client.close());
      sites.push([site, client]);
    }
    const [[site, first], [, second]] = sites as [[TestLatchkey, PageClient], [TestLatchkey, PageClient]];
    latchkey = site;
    listen(first);
    listen(second);
    const response = responseFor(latchkey, idp, MALLORY, undefined);
    await expectSignedInAs(await postToAcs(first, response), MALLORY.nameId, first);
    await expectRefused(await postToAcs(second, response), /was used before \(a replayed response\)/, 1, second);
    const third = first.another();
    await expectRefused(await postToAcs(third, response), /was used before \(a replayed response\)/, 1, third);
  });

  it("refuses a response to another browser's request, or to a request never made, and leaves the other browser's sign-in alive", async () => {
    await setUp();
    const other = browser.another();
    const theirs = await startSignIn(other);
    await startSignIn(browser);
    await expectRefused(await postToAcs(browser, responseFor(latchkey, idp, MALLORY, theirs.requestId)), /unknown, used or expired state/);
    for (const madeUp of ['_made-up', 'no-underscore', '_']) {
      await expectRefused(await postToAcs(browser, responseFor(latchkey, idp, MALLORY, madeUp)), /unknown, used or expired state/);
    }
    await expectSignedInAs(await postToAcs(other, responseFor(latchkey, idp, VICTIM, theirs.requestId)), VICTIM.nameId, other);
  });

  it('refuses a response for another audience, Destination, Recipient or Issuer', async () => {
    await setUp();
    const elsewhere = 'https://other-sp.example/accounts/saml/acme/acs/';
    await expectRefused(await answeredAs(MALLORY, { audience: 'https://other-sp.example/metadata/' }), /audience/i);
    await expectRefused(await answeredAs(MALLORY, { destination: elsewhere }), /Destination/);
    await expectRefused(await answeredAs(MALLORY, { recipient: elsewhere }), /Recipient/);
    await expectRefused(await answeredAs(MALLORY, { issuer: 'https://other-idp.example/metadata' }), /issued by another IdP/);
  });

  it("refuses an expired and a not-yet-valid assertion on the site's clock, and accepts one within the 300 s drift", async () => {
    await setUp();
    const at = (offset: number) => ({ now: new Date(latchkey.clock.now().getTime() + offset) });
    // The IdP's assertions are valid five minutes either side of their `now`.
    await expectRefused(await answeredAs(MALLORY, at(-10 * MINUTE - 1000)), /has expired/);
    await expectRefused(await answeredAs(MALLORY, at(10 * MINUTE + 1000)), /not valid yet/);
    await expectSignedInAs(await answeredAs(MALLORY, at(-10 * MINUTE + 1000)), MALLORY.nameId);
    await browser.post('/accounts/logout/', {});
    await expectSignedInAs(await answeredAs(MALLORY, at(10 * MINUTE - 1000)), MALLORY.nameId);
  });

  it('signs in with an assertion encrypted for our key, and refuses one for another key, or a plain one when encryption is wanted', async () => {
    const ours = { x509cert: spKeys.certificate, private_key: spKeys.privateKey };
    await setUp({ ...ours, want_assertion_encrypted: true });
    await expectRefused(await answeredAs(MALLORY, { encryptFor: strangerKeys.certificate }), /cannot be decrypted with our key|was refused: /);
    await expectRefused(await answeredAs(MALLORY), /not encrypted/);
    await expectSignedInAs(await answeredAs(MALLORY, { encryptFor: spKeys.certificate }), MALLORY.nameId);
  });

  it('refuses an IdP-initiated response by default', async () => {
    await setUp();
    await expectRefused(await postToAcs(browser, responseFor(latchkey, idp, MALLORY, undefined)), /unsolicited SAML response refused/);
  });

  it('follows an IdP-initiated RelayState only to a path on this site, when IdP-initiated sign-in is enabled', async () => {
    await setUp(UNSOLICITED);
    const landing = async (relayState: string) => {
      const answer = await postToAcs(browser, responseFor(latchkey, idp, MALLORY, undefined), relayState);
      await expectSignedInAs(answer, MALLORY.nameId);
      await browser.post('/accounts/logout/', {});
      return answer.headers.location;
    };
    expect(await landing('/accounts/email/')).toBe('/accounts/email/');
    for (const relayState of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)']) {
      expect(await landing(relayState), relayState).toBe('/');
    }
  });

  it('refuses a SHA-1 signature by default, and takes it only with reject_deprecated_algorithm false', async () => {
    await setUp();
    await expectRefused(await answeredAs(MALLORY, { algorithm: 'sha1' }), /the signature algorithm "http:\/\/www.w3.org\/2000\/09\/xmldsig#rsa-sha1" is not accepted/);
    await setUp({ reject_deprecated_algorithm: false });
    await expectSignedInAs(await answeredAs(MALLORY, { algorithm: 'sha1' }), MALLORY.nameId);
  });

  it('finishes a parked response once, within its minute, and only with the cookie the ACS set for it', async () => {
    await setUp();
    /** The IdP's page posting to the ACS: where it sends the browser, and the cookie it sets for that. */
    const park = async (samlResponse: string) => {
      const parked = await browser.app.inject({
        method: 'POST',
        url: new URL(samlSiteUrls(latchkey).acs).pathname,
        payload: new URLSearchParams({ SAMLResponse: samlResponse }).toString(),
        headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded', origin: idp.origin },
      });
      expect(parked.statusCode).toBe(303);
      const cookie = parked.cookies.find((one) => one.name === 'saml_acs')!;
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/accounts/saml/acme/acs/finish/', maxAge: 60 });
      return { finish: parked.headers.location as string, cookie: cookie.value };
    };
    const { requestId } = await startSignIn(browser);
    const { finish, cookie } = await park(responseFor(latchkey, idp, MALLORY, requestId));
    await expectRefused(await browser.get(finish), /without a parked response/);
    const other = browser.another();
    other.cookies.set('saml_acs', 'forged');
    await expectRefused(await other.get(finish), /without a parked response/, 0, other);
    browser.cookies.set('saml_acs', cookie);
    await expectSignedInAs(await browser.get(finish), MALLORY.nameId);
    await browser.post('/accounts/logout/', {});
    browser.cookies.set('saml_acs', cookie);
    await expectRefused(await browser.get(finish), /without a parked response/, 1);
    // A minute later, the browser did not come straight from the IdP's page.
    const late = await park(responseFor(latchkey, idp, MALLORY, (await startSignIn(browser)).requestId));
    latchkey.clock.advance(61_000);
    browser.cookies.set('saml_acs', late.cookie);
    await expectRefused(await browser.get(late.finish), /without a parked response/, 1);
  });

  it('counts each post to the ACS as a login attempt: past the login limit it is answered 429 once, and nothing is parked', async () => {
    const site = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: samlApp(idp), ACCOUNT_RATE_LIMITS: { login: '2/m/ip' } } });
    // The site's own log, as a project's Fastify logger writes it: a second answer to one request is logged there.
    const lines: string[] = [];
    const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } });
    app.addHook('onRequest', site.allowedHostsGuard);
    await app.register(site.plugin);
    cleanUps.push(() => site.destroy(), () => app.close());
    const post = () => app.inject({ method: 'POST', url: '/accounts/saml/acme/acs/', payload: 'SAMLResponse=PHNhbWw%2B', headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' } });
    expect((await post()).statusCode).toBe(303);
    expect((await post()).statusCode).toBe(303);
    const refused = await post();
    expect([refused.statusCode, refused.headers['retry-after'], refused.body, refused.cookies]).toEqual([429, '60', 'Too many sign-in attempts. Try again later.', []]);
    const answers = lines.map((line) => JSON.parse(line) as { msg: string; res?: { statusCode: number }; err?: { code?: string } });
    expect(answers.filter((line) => line.msg === 'request completed').map((line) => line.res?.statusCode)).toEqual([303, 303, 429]);
    expect(answers.filter((line) => line.err !== undefined || line.msg.includes('already sent'))).toEqual([]);
    // Every session in the store, counted by ending them all: the two parked posts, none for the refused one.
    expect(await site.deps.store.sessions.deleteExpired(new Date('2999-01-01T00:00:00Z'))).toBe(2);
  });

  it('refuses a SAMLResponse that is not XML, has a DOCTYPE, or is missing, clearly and without a 500', async () => {
    const doctype = (xml: string) => `<!DOCTYPE lol [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>${xml.replace('</saml:Issuer>', '&lol2;</saml:Issuer>')}`;
    for (const [advanced, reason] of [[{}, /the SAMLResponse is not a SAML Response/], [UNSOLICITED, /the SAMLResponse is not a SAML Response/]] as const) {
      await setUp(advanced);
      const { requestId } = await startSignIn(browser);
      const garbage = ['not even base64!', Buffer.from('plain text').toString('base64'), rewritten(responseFor(latchkey, idp, MALLORY, requestId), doctype)];
      for (const samlResponse of garbage) await expectRefused(await postToAcs(browser, samlResponse), reason);
    }
    const missing = await browser.app.inject({ method: 'POST', url: '/accounts/saml/acme/acs/', payload: 'RelayState=%2F', headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toBe('The identity provider sent no SAMLResponse.');
    // Longer than any document the checks would read: refused by the ACS before it is parked.
    const oversized = await browser.app.inject({ method: 'POST', url: '/accounts/saml/acme/acs/', payload: `SAMLResponse=${'A'.repeat(700_000)}`, headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' } });
    expect([oversized.statusCode, oversized.body, oversized.cookies]).toEqual([400, 'The SAMLResponse is too large.', []]);
  });
});
