/**
 * A login stage of the project's own (docs/extending.md, "A login stage of your own"): the
 * adapter adds "accept the new terms" after Latchkey's stages, and every door stops at it and
 * carries on from it: the pages, the admin's login, a provider's sign-in, the headless API (as a
 * pending flow, for the browser and the app client), while the token API refuses plainly. The
 * stage's record is the project's (here a set of user ids, in a real project a table).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccountAdapter } from '../account/adapter.js';
import type { CustomLoginStage, LoginStageEntry } from '../account/login-stages.js';
import type { User } from '../account/model.js';
import type { Settings } from '../config/settings.js';
import { LatchkeyError } from '../core/errors.js';
import { openLatchkey } from '../latchkey.js';
import { ApiTestClient } from '../testing/api.js';
import { testDatabaseKinds } from '../testing/database.js';
import { dummyProviders, throughDummy } from '../testing/dummy-sign-in.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, testSettings, type TestLatchkey, type TestLatchkeyOptions } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';
import { activateTotpFor } from '../testing/mfa.js';

const PASSWORD = 'a long enough passphrase';
const TERMS_PAGE = '/accounts/login/stage/accept_terms/';
const TERMS_TEMPLATE = `{% extends "account/base.html" %}
{% from "account/_form.html" import csrf %}
{% block content %}
<h1>Our terms have changed</h1>
{% if form.errors.accept %}<p class="error">{{ form.errors.accept[0] }}</p>{% endif %}
<form method="post" action="{{ url('account_login_stage', { id: stage }) }}">
  {{ csrf(csrf_token) }}
  <label><input type="checkbox" name="accept" value="yes"> I accept the terms of 2026</label>
  <button type="submit">Continue</button>
</form>
{% endblock %}
`;

/** The project's stage, and its record of who accepted the terms. */
function acceptTermsStage(): CustomLoginStage & { accepted: Set<number> } {
  const accepted = new Set<number>();
  return {
    id: 'accept_terms',
    template: 'account/accept_terms.html',
    tokenRefusal: 'Accept the new terms on the site first, then ask for a token again.',
    accepted,
    isPending: (user: User) => !accepted.has(user.id),
    complete(user: User, answer: Readonly<Record<string, unknown>>) {
      if (answer.accept !== 'yes' && answer.accept !== true) throw new LatchkeyError('invalid_input', 'Tick the box to accept the terms.', { param: 'accept' });
      accepted.add(user.id);
    },
  };
}

class TermsAdapter extends AccountAdapter {
  constructor(
    settings: Settings,
    private readonly terms: CustomLoginStage,
  ) {
    super(settings);
  }

  override getLoginStages(): readonly LoginStageEntry[] {
    return [...super.getLoginStages(), this.terms];
  }
}

let templates: string;
beforeAll(() => {
  templates = mkdtempSync(join(tmpdir(), 'lk-stage-templates-'));
  mkdirSync(join(templates, 'account'));
  writeFileSync(join(templates, 'account', 'accept_terms.html'), TERMS_TEMPLATE);
});
afterAll(() => rmSync(templates, { recursive: true, force: true }));

describe.each(testDatabaseKinds())('a login stage of the project\'s own, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  let stage: ReturnType<typeof acceptTermsStage>;
  let ada: User;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(settings: TestLatchkeyOptions['settings'] = {}): Promise<void> {
    stage = acceptTermsStage();
    latchkey = await createTestLatchkey({ kind, settings, templateDirs: [templates], adapter: (values) => new TermsAdapter(values, stage) });
    browser = await PageClient.create(latchkey, { plugin: { headless: true, api: {} } });
    ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  it('the pages: the login stops at the stage\'s page, which refuses an empty answer and then carries on to `next`', async () => {
    await setUp();
    const login = await browser.post('/accounts/login/?next=/orders/', { login: 'ada', password: PASSWORD, next: '/orders/' });
    expect(login.headers.location).toBe(TERMS_PAGE);
    expect(await latchkey.sessions.listForUser(ada)).toEqual([]);
    const page = await browser.get(TERMS_PAGE);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('I accept the terms of 2026');
    const refused = await browser.post(TERMS_PAGE, {});
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Tick the box to accept the terms.');
    expect(stage.accepted.has(ada.id)).toBe(false);
    const accepted = await browser.post(TERMS_PAGE, { accept: 'yes' });
    expect(accepted.headers.location).toBe('/orders/');
    expect(stage.accepted.has(ada.id)).toBe(true);
    expect(await latchkey.sessions.listForUser(ada)).toHaveLength(1);
    // Accepted once: the next login does not stop.
    const again = browser.another();
    expect((await again.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe('/');
  });

  it('the pages: nobody reaches the stage\'s page without a login waiting there, and it runs after the code', async () => {
    await setUp();
    expect((await browser.get(TERMS_PAGE)).headers.location).toBe('/accounts/login/');
    expect((await browser.post(TERMS_PAGE, { accept: 'yes' })).headers.location).toBe('/accounts/login/');
    expect(stage.accepted.size).toBe(0);
    const totp = await activateTotpFor(latchkey, ada);
    expect((await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD })).headers.location).toBe('/accounts/2fa/authenticate/');
    // Waiting at the code: the terms page is not yet this login's.
    expect((await browser.get(TERMS_PAGE)).headers.location).toBe('/accounts/login/');
    expect((await browser.post('/accounts/2fa/authenticate/', { code: totp.code() })).headers.location).toBe(TERMS_PAGE);
    expect((await browser.post(TERMS_PAGE, { accept: 'yes' })).headers.location).toBe('/');
  });

  it('the admin\'s login stops at the stage\'s page too, and lands in the admin', async () => {
    await setUp();
    await latchkey.users.update(ada, { isStaff: true, isSuperuser: true });
    const login = await browser.post('/admin/login/', { username: 'ada', password: PASSWORD, next: '/admin/' });
    expect(login.headers.location).toBe(TERMS_PAGE);
    expect((await browser.post(TERMS_PAGE, { accept: 'yes' })).headers.location).toBe('/admin/');
    expect((await browser.get('/admin/')).statusCode).toBe(200);
  });

  it('a provider\'s sign-in stops at the stage\'s page and carries on from it', async () => {
    await setUp({ SOCIALACCOUNT_PROVIDERS: dummyProviders() });
    const callback = await throughDummy(browser, { id: 'grace-1906', email: 'grace@example.com', email_verified: 'true', name: 'Grace Hopper' });
    expect(callback.headers.location).toBe(TERMS_PAGE);
    const grace = await latchkey.users.findByEmail('grace@example.com');
    expect(grace).toBeDefined();
    expect(await latchkey.sessions.listForUser(grace!)).toEqual([]);
    expect((await browser.post(TERMS_PAGE, { accept: 'yes' })).headers.location).toBe('/');
    expect(await latchkey.sessions.listForUser(grace!)).toHaveLength(1);
  });

  it.each(['browser', 'app'] as const)('the headless API (%s client): a pending flow, answered at auth/stage/{id}', async (client) => {
    await setUp();
    const spa = new HeadlessTestClient(browser.app, client, latchkey);
    // Custom flow ids are outside allauth's enum (as in allauth): these answers skip the contract check.
    const login = await spa.post('/auth/login', { username: 'ada', password: PASSWORD }, { validate: false });
    expect(login.status).toBe(401);
    expect(login.body.data.flows).toContainEqual({ id: 'accept_terms', is_pending: true });
    const refused = await spa.post('/auth/stage/accept_terms', { accept: false }, { validate: false });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ message: 'Tick the box to accept the terms.', code: 'invalid', param: 'accept' }]);
    const accepted = await spa.post('/auth/stage/accept_terms', { accept: true }, { validate: false });
    expect(accepted.status).toBe(200);
    expect(accepted.body.data.user.username).toBe('ada');
    expect((await spa.get('/auth/session')).status).toBe(200);
  });

  it('the headless API\'s served description lists the stage\'s operation and its flow id', async () => {
    await setUp({ HEADLESS_SERVE_SPECIFICATION: true });
    const document = (await browser.get('/_allauth/openapi.json')).json<{
      paths: Record<string, { post?: { parameters: { name: string; schema?: { enum?: string[] } }[] } }>;
      components: { schemas: { Flow: { properties: { id: { enum: string[] } } } } };
    }>();
    const answer = document.paths['/_allauth/{client}/v1/auth/stage/{id}']?.post;
    expect(answer?.parameters.find((parameter) => parameter.name === 'id')?.schema?.enum).toEqual(['accept_terms']);
    expect(document.components.schemas.Flow.properties.id.enum).toContain('accept_terms');
  });

  it('the headless API: a client with no login waiting there gets the flows, and nothing is recorded', async () => {
    await setUp();
    const spa = new HeadlessTestClient(browser.app, 'app', latchkey);
    const answer = await spa.post('/auth/stage/accept_terms', { accept: true }, { validate: false });
    expect(answer.status).toBe(401);
    expect(answer.body.data.flows).toEqual([{ id: 'login' }, { id: 'signup' }]);
    expect(stage.accepted.size).toBe(0);
    expect((await spa.post('/auth/stage/no_such_stage', { accept: true }, { validate: false })).status).toBe(401);
  });

  it('the token API refuses a login waiting at the stage, with the stage\'s words, and gives the token once it is passed', async () => {
    await setUp();
    const script = new ApiTestClient(browser.app, latchkey);
    const refused = await script.request('POST', '/api/auth-token/', { json: { username: 'ada', password: PASSWORD } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ non_field_errors: ['Accept the new terms on the site first, then ask for a token again.'] });
    stage.accepted.add(ada.id);
    const obtained = await script.request('POST', '/api/auth-token/', { json: { username: 'ada', password: PASSWORD } });
    expect(obtained.statusCode).toBe(200);
  });

  it('preLogin: the project\'s refusal ends a login at every door before any stage', async () => {
    class ClosedAdapter extends TermsAdapter {
      override preLogin(user: User): void {
        if (user.username === 'ada') throw new LatchkeyError('permission_denied', 'Your shop is closed for the night.');
      }
    }
    stage = acceptTermsStage();
    latchkey = await createTestLatchkey({ kind, templateDirs: [templates], adapter: (values) => new ClosedAdapter(values, stage) });
    browser = await PageClient.create(latchkey, { plugin: { headless: true, api: {} } });
    ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const page = await browser.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('Your shop is closed for the night.');
    expect(await latchkey.sessions.listForUser(ada)).toEqual([]);
    const spa = new HeadlessTestClient(browser.app, 'app', latchkey);
    const headless = await spa.post('/auth/login', { username: 'ada', password: PASSWORD });
    expect(headless.status).toBe(403);
    expect(headless.body.errors?.[0]?.message).toBe('Your shop is closed for the night.');
    const token = await new ApiTestClient(browser.app, latchkey).request('POST', '/api/auth-token/', { json: { username: 'ada', password: PASSWORD } });
    expect(token.statusCode).toBe(400);
    expect(token.json()).toEqual({ non_field_errors: ['Your shop is closed for the night.'] });
    expect(stage.accepted.size).toBe(0);
  });
});

describe('a list of login stages that would let a login skip one', () => {
  it.each([
    ['a built-in stage left out', ['login_by_code', 'verify_email', 'mfa_trust', 'mfa_signup_webauthn'], /missing mfa_authenticate/],
    ['a stage twice', ['login_by_code', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_signup_webauthn', 'verify_email'], /verify_email is listed twice/],
    ['a built-in id taken', ['login_by_code', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_signup_webauthn', { ...acceptTermsStage(), id: 'signup' }], /"signup" is the id of one of Latchkey's own/],
    ['an id a path cannot hold', ['login_by_code', 'verify_email', 'mfa_authenticate', 'mfa_trust', 'mfa_signup_webauthn', { ...acceptTermsStage(), id: 'Accept Terms' }], /"Accept Terms" is not/],
  ] as const)('stops start-up: %s', async (_case, stages, message) => {
    class WrongAdapter extends AccountAdapter {
      override getLoginStages(): readonly LoginStageEntry[] {
        return stages;
      }
    }
    const settings = testSettings();
    // Refused before any database is opened: this one would not even exist.
    await expect(openLatchkey({ settings: { ...settings, DATABASE_URL: 'sqlite:/nonexistent/folder/db.sqlite3' }, adapter: new WrongAdapter(settings) })).rejects.toThrow(message);
  });
});
