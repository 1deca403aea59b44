/**
 * Signing in with a SAML identity provider through the headless API's redirect, against the test
 * IdP on loopback, on every database: the app offered in config (redirect only: a SAML IdP gives
 * no token an app could send), the front end's form post that sends the browser to the IdP, the
 * IdP's answer at the ACS returning the browser to callback_url signed in, and a refused answer
 * returning it there with the error. Every JSON response is checked against allauth's published
 * contract by the test client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SettingValues } from '../../config/settings.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { startTestSamlIdp, type SamlPerson, type TestSamlIdp } from '../../testing/saml-idp.js';
import { postToAcsAndFinish, responseFor, SAML_APP_NAME, SAML_ORG, samlApp } from '../../testing/saml-sign-in.js';

const CALLBACK = '/spa/done';
const ADA: SamlPerson = { nameId: 'ada-at-acme', attributes: { 'urn:oid:0.9.2342.19200300.100.1.3': 'ada@acme.example', 'http://schemas.auth0.com/email_verified': 'true' } };

let idp: TestSamlIdp;
beforeAll(async () => {
  idp = await startTestSamlIdp();
});
afterAll(() => idp.close());

describe.each(testDatabaseKinds())('headless SAML sign-in on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: HeadlessTestClient;
  afterEach(async () => {
    await browser.app.close();
    await latchkey.destroy();
  });

  async function setUp(settings: Partial<SettingValues> = {}): Promise<void> {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: samlApp(idp), ...settings } });
    browser = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'browser', latchkey);
  }

  /** The front end's form post (with the CSRF token in the form, as a real form carries it), and the AuthnRequest it sends the browser to the IdP with. */
  async function startRedirect(form: Record<string, string> = {}): Promise<{ location: URL; requestId: string }> {
    const started = await browser.post('/auth/provider/redirect', undefined, { form: { provider: idp.entityId, callback_url: CALLBACK, process: 'login', ...form } });
    expect(started.status).toBe(302);
    const location = new URL(started.headers.location as string);
    return { location, requestId: idp.readAuthnRequest(location).id };
  }

  it('offers the SAML app in config and in the session’s flows, for the redirect only', async () => {
    await setUp();
    const config = await browser.get('/config');
    expect(config.body.data.socialaccount).toEqual({ providers: [{ id: idp.entityId, name: SAML_APP_NAME, client_id: SAML_ORG, flows: ['provider_redirect'] }] });
    const flows = (await browser.get('/auth/session')).body.data.flows as { id: string; providers?: string[] }[];
    expect(flows).toContainEqual({ id: 'provider_redirect', providers: [idp.entityId] });
    expect(flows.map((flow) => flow.id)).not.toContain('provider_token');
    // An app has no browser to redirect: nothing is offered to it.
    expect((await browser.another('app').get('/config')).body.data.socialaccount).toEqual({ providers: [] });
  });

  it('sends the browser to the IdP, and the IdP’s answer back to callback_url, signed in', async () => {
    await setUp();
    // A real form carries the CSRF token: without it nothing starts.
    const forged = await browser.post('/auth/provider/redirect', undefined, { csrf: false, form: { provider: idp.entityId, callback_url: CALLBACK, process: 'login' } });
    expect([forged.status, forged.headers.location]).toEqual([403, undefined]);
    const { location, requestId } = await startRedirect();
    expect(location.origin + location.pathname).toBe(idp.ssoUrl);
    const { acs, finish } = await postToAcsAndFinish(browser, responseFor(latchkey, idp, ADA, requestId), undefined, { origin: idp.origin });
    expect(acs.statusCode).toBe(303);
    expect([finish?.statusCode, finish?.headers.location]).toEqual([302, CALLBACK]);
    const session = await browser.get('/auth/session');
    expect(session.status).toBe(200);
    expect(session.body.data.user).toMatchObject({ email: 'ada@acme.example', has_usable_password: false });
    expect(session.body.data.methods).toEqual([{ method: 'socialaccount', at: latchkey.clock.now().getTime() / 1000, provider: idp.entityId, uid: 'ada-at-acme', reauthenticated: false }]);
    expect((await browser.get('/account/providers')).body.data).toEqual([{ uid: 'ada-at-acme', display: SAML_APP_NAME, provider: expect.objectContaining({ id: idp.entityId, client_id: SAML_ORG }) }]);
  });

  it('returns a refused answer to callback_url with the error, signing nobody in', async () => {
    await setUp();
    const { requestId } = await startRedirect();
    // A response to this request, but for another service provider (its audience).
    const elsewhere = responseFor(latchkey, idp, ADA, requestId, { audience: 'https://other-sp.example/metadata/' });
    const { finish } = await postToAcsAndFinish(browser, elsewhere, undefined, { origin: idp.origin });
    expect([finish?.statusCode, finish?.headers.location]).toEqual([302, `${CALLBACK}?error=unknown&error_process=login`]);
    expect((await browser.get('/auth/session')).status).toBe(401);
    expect(await latchkey.deps.store.users.count()).toBe(0);

    // The request is used up: the good answer to it, coming late, belongs to no sign-in (so to no front end) and is refused on the error page.
    const late = await postToAcsAndFinish(browser, responseFor(latchkey, idp, ADA, requestId), undefined, { origin: idp.origin });
    expect(late.finish?.headers.location).toBe('/accounts/3rdparty/login/error/');
    expect((await browser.get('/auth/session')).status).toBe(401);
  });

  it('with signup closed returns the browser to callback_url with error=signup_closed', async () => {
    await setUp({ ACCOUNT_ALLOW_REGISTRATION: false });
    const { requestId } = await startRedirect();
    const { finish } = await postToAcsAndFinish(browser, responseFor(latchkey, idp, ADA, requestId), undefined, { origin: idp.origin });
    expect(finish?.headers.location).toBe(`${CALLBACK}?error=signup_closed&error_process=login`);
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });
});
