import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import Fastify, { type FastifyInstance } from 'fastify';
import { parse } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient, type HeadlessResponse } from '../../testing/headless.js';
import { SoftwareAuthenticator } from '../../testing/webauthn-authenticator.js';
import { servedHeadlessDocument } from '../../testing/headless-openapi.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import type { SettingValues } from '../../config/settings.js';

/** Security keys, passkey login and passkey signup (which needs verification by code), as allauth's example backend. */
const PASSKEYS: Partial<SettingValues> = {
  MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
  MFA_PASSKEY_LOGIN_ENABLED: true,
  MFA_PASSKEY_SIGNUP_ENABLED: true,
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true,
};

type Json = Record<string, unknown>;

const PASSWORD = 'a long enough passphrase';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const reference = parse(readFileSync(new URL('../../../test/reference/allauth-headless/openapi.yaml', import.meta.url), 'utf8')) as Json;

function operationsOf(spec: Json): [string, string, Json][] {
  return Object.entries(spec.paths as Record<string, Json>).flatMap(([path, methods]) =>
    METHODS.filter((method) => methods[method] !== undefined).map((method): [string, string, Json] => [path, method, methods[method] as Json]),
  );
}

/** Every `$ref` anywhere in a JSON value. */
function refsIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsIn);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' ? [value] : refsIn(value)));
}

function at(spec: Json, ref: string): unknown {
  let current: unknown = spec;
  for (const segment of ref.replace(/^#\//, '').split('/')) current = (current as Json | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  return current;
}

/** The documents as served: with the default settings, and with passkeys and security keys. */
let document: Json;
let passkeysDocument: Json;
const ajv = new Ajv({ strict: false, allErrors: true });
const ours = (pointer: string, id = 'latchkey') => ajv.compile({ $ref: `${id}${pointer}` });
beforeAll(async () => {
  document = await servedHeadlessDocument();
  passkeysDocument = await servedHeadlessDocument(PASSKEYS);
  ajv.addSchema(document, 'latchkey');
  ajv.addSchema(passkeysDocument, 'latchkey-passkeys');
});

/** The schema a document (this one, or the one with passkeys) gives a response of one operation, as a validator. */
function responseValidator(template: string, method: string, status: number, spec: Json = document) {
  const response = ((spec.paths as Json)[template] as Record<string, { responses: Json }>)[method]!.responses[String(status)] as Json | undefined;
  if (response === undefined) return undefined;
  const ref = typeof response.$ref === 'string' ? response.$ref : `#/paths/${template.replaceAll('/', '~1')}/${method}/responses/${status}`;
  return ours(`${ref}/content/application~1json/schema`, spec === document ? 'latchkey' : 'latchkey-passkeys');
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.0.3 whose every $ref resolves and every operation answers something described', () => {
    expect(document.openapi).toBe('3.0.3');
    expect(document.servers).toEqual([{ url: 'http://testserver' }]);
    for (const ref of refsIn(document)) expect(at(document, ref), ref).toBeDefined();
    const ids = new Set<string>();
    for (const [path, method, operation] of operationsOf(document)) {
      const responses = Object.entries(operation.responses as Json);
      expect(responses.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const [status, response] of responses) expect((response as Json).description, `${method} ${path} ${status}`).toBeTruthy();
      expect(typeof operation.summary === 'string' && typeof operation.description === 'string').toBe(true);
      expect(ids.has(operation.operationId as string)).toBe(false);
      ids.add(operation.operationId as string);
      // A path's {client} is declared as a parameter wherever it appears.
      const declared = ((operation.parameters as Json[] | undefined) ?? []).map((parameter) => (typeof parameter.$ref === 'string' ? (at(document, parameter.$ref) as Json) : parameter));
      expect(declared.some((parameter) => parameter.name === 'client' && parameter.in === 'path')).toBe(path.includes('{client}'));
    }
  });

  it("names only operations of allauth's published contract", () => {
    const published = new Set(operationsOf(reference).map(([path, method]) => `${method} ${path}`));
    const extra = operationsOf(document).map(([path, method]) => `${method} ${path}`).filter((operation) => !published.has(operation));
    expect(extra).toEqual([]);
  });

  it('describes the headers of the contract: the session token and the keys of the mailed links', () => {
    const parameters = operationsOf(document).flatMap(([, , operation]) => (operation.parameters as Json[] | undefined) ?? []);
    const headers = new Set(parameters.filter((parameter) => parameter.in === 'header').map((parameter) => parameter.name));
    expect([...headers].sort()).toEqual(['X-Email-Verification-Key', 'X-Password-Reset-Key', 'X-Session-Token']);
    expect(((document.paths as Json)['/_allauth/{client}/v1/auth/email/verify'] as { get: { parameters: Json[] } }).get.parameters).toContainEqual(expect.objectContaining({ name: 'X-Email-Verification-Key', in: 'header', required: true }));
    expect(((document.paths as Json)['/_allauth/{client}/v1/auth/password/reset'] as { get: { parameters: Json[] } }).get.parameters).toContainEqual(expect.objectContaining({ name: 'X-Password-Reset-Key', in: 'header', required: true }));
  });

  it("accepts allauth's own examples of the shared shapes", () => {
    const examples = (reference.components as { examples: Record<string, { value: Json }> }).examples;
    const check = (pointer: string, value: unknown) => {
      const validate = ours(pointer);
      expect(validate(value), `${pointer}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    };
    check('#/components/schemas/User', examples.User!.value);
    check('#/components/schemas/AuthenticatedResponse', examples.AuthenticatedByPassword!.value);
    check('#/components/schemas/AuthenticatedResponse', examples.AuthenticatedByPasswordAnd2FA!.value);
    check('#/components/schemas/ReauthenticationResponse', examples.ReauthenticationRequired!.value);
    check('#/components/schemas/ErrorResponse', examples.InvalidAuthenticatorCode!.value);
    check('#/components/schemas/ErrorResponse', examples.IncorrectPassword!.value);
    // The flows Latchkey offers are allauth's, login by code included; every example's flow fits.
    const flow = ours('#/components/schemas/Flow');
    const accepted = (entry: Json): boolean => flow(entry);
    const flows = Object.values(examples).flatMap((example) => ((example.value.data as Json | undefined)?.flows as Json[] | undefined) ?? []);
    expect(flows.filter(accepted).map((entry) => entry.id)).toEqual(
      expect.arrayContaining(['login', 'login_by_code', 'signup', 'verify_email', 'mfa_authenticate', 'reauthenticate', 'mfa_reauthenticate', 'provider_redirect', 'provider_token', 'provider_signup']),
    );
    const refused = new Set(flows.filter((entry) => !accepted(entry)).map((entry) => entry.id));
    expect([...refused].sort()).toEqual([]);
    const configuration = (reference.components as { schemas: Record<string, { example: { data: { socialaccount: { providers: Json[] } } } }> }).schemas.ConfigurationResponse!.example;
    for (const provider of configuration.data.socialaccount.providers) check('#/components/schemas/Provider', provider);
  });
});

describe.each(testDatabaseKinds())('the served specification on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  /** The app, and every route it registered. */
  async function setUp(serve: boolean, settings: Partial<SettingValues> = {}): Promise<{ app: FastifyInstance; routes: string[] }> {
    latchkey = await createTestLatchkey({ kind, settings: { HEADLESS_SERVE_SPECIFICATION: serve, ...settings } });
    const app = Fastify();
    const routes: string[] = [];
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push(`${method.toLowerCase()} ${route.url}`);
    });
    await app.register(latchkey.plugin, { headless: true });
    await app.ready();
    return { app, routes };
  }

  /** Every operation a document describes, for each client it serves. */
  const describedRoutes = (spec: Json) =>
    operationsOf(spec)
      .flatMap(([path, method]) => (path.includes('{client}') ? ['browser', 'app'].map((client) => `${method} ${path.replace('{client}', client)}`) : [`${method} ${path}`]))
      .sort();
  const servedRoutes = (routes: string[]) => routes.filter((route) => /^(get|post|put|patch|delete) \/_allauth\/(browser|app)\//.test(route)).sort();

  it('describes exactly the routes the server registers, for both clients', async () => {
    const { app, routes } = await setUp(true);
    expect(describedRoutes(document)).toEqual(servedRoutes(routes));
    await app.close();
  });

  it('describes the WebAuthn routes exactly where the settings register them', async () => {
    const { app, routes } = await setUp(true, PASSKEYS);
    const withPasskeys = passkeysDocument;
    expect(describedRoutes(withPasskeys)).toEqual(servedRoutes(routes));
    expect(describedRoutes(withPasskeys).filter((route) => route.includes('webauthn') && route.includes('/browser/'))).toEqual([
      'delete /_allauth/browser/v1/account/authenticators/webauthn',
      'get /_allauth/browser/v1/account/authenticators/webauthn',
      'get /_allauth/browser/v1/auth/webauthn/authenticate',
      'get /_allauth/browser/v1/auth/webauthn/login',
      'get /_allauth/browser/v1/auth/webauthn/reauthenticate',
      'get /_allauth/browser/v1/auth/webauthn/signup',
      'post /_allauth/browser/v1/account/authenticators/webauthn',
      'post /_allauth/browser/v1/auth/webauthn/authenticate',
      'post /_allauth/browser/v1/auth/webauthn/login',
      'post /_allauth/browser/v1/auth/webauthn/reauthenticate',
      'post /_allauth/browser/v1/auth/webauthn/signup',
      'put /_allauth/browser/v1/account/authenticators/webauthn',
      'put /_allauth/browser/v1/auth/webauthn/signup',
    ]);
    for (const ref of refsIn(withPasskeys)) expect(at(withPasskeys, ref), ref).toBeDefined();
    const published = new Set(operationsOf(reference).map(([path, method]) => `${method} ${path}`));
    expect(operationsOf(withPasskeys).map(([path, method]) => `${method} ${path}`).filter((operation) => !published.has(operation))).toEqual([]);
    await app.close();
  });

  it('serves it to anyone as JSON and YAML, the same document each time, and its docs page to staff', async () => {
    const { app } = await setUp(true);
    const json = await app.inject({ url: '/_allauth/openapi.json', headers: { host: 'testserver' } });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.headers['cache-control']).toBe('public, max-age=300');
    expect(json.json()).toEqual(document);
    const yaml = await app.inject({ url: '/_allauth/openapi.yaml', headers: { host: 'testserver' } });
    expect(yaml.statusCode).toBe(200);
    expect(yaml.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(parse(yaml.body)).toEqual(json.json());

    // The page on it is for signed-in staff (kit/interactive-docs.test.ts): a visitor is sent to the login.
    const html = await app.inject({ url: '/_allauth/openapi.html', headers: { host: 'testserver' } });
    expect(html.statusCode).toBe(302);
    expect(html.headers.location).toBe('/accounts/login/?next=%2F_allauth%2Fopenapi.html');
    await app.close();
  });

  it('answers 404 for all three when HEADLESS_SERVE_SPECIFICATION is off', async () => {
    const { app } = await setUp(false);
    for (const name of ['openapi.json', 'openapi.yaml', 'openapi.html']) {
      const response = await app.inject({ url: `/_allauth/${name}`, headers: { host: 'testserver' } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ status: 404 });
    }
    await app.close();
  });

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it("describes the server's real answers: each status is listed and each body fits its schema", async () => {
      const { app } = await setUp(true);
      await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      const api = new HeadlessTestClient(app, client, latchkey);
      const checked: string[] = [];
      const check = async (response: Promise<HeadlessResponse>, method: string, path: string) => {
        const { status, body } = await response;
        const validate = responseValidator(`/_allauth/{client}/v1${path}`, method, status);
        expect(validate, `${method} ${path} ${status} is not described`).toBeDefined();
        expect(validate!(body), `${method} ${path} ${status}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
        checked.push(`${method} ${path} ${status}`);
      };
      await check(api.get('/config'), 'get', '/config');
      await check(api.get('/auth/session'), 'get', '/auth/session');
      await check(api.post('/auth/login', { username: 'ada', password: 'wrong password' }), 'post', '/auth/login');
      await check(api.post('/auth/password/request', { email: 'ada@example.com' }), 'post', '/auth/password/request');
      await check(api.get('/auth/password/reset', { headers: { 'x-password-reset-key': 'nope' } }), 'get', '/auth/password/reset');
      await check(api.get('/auth/email/verify', { headers: { 'x-email-verification-key': 'nope' } }), 'get', '/auth/email/verify');
      await check(api.get('/auth/provider/signup'), 'get', '/auth/provider/signup');
      await check(api.post('/auth/provider/token', { provider: 'nobody', process: 'login', token: { client_id: 'x', id_token: 'y' } }), 'post', '/auth/provider/token');
      await check(api.post('/auth/login', { username: 'ada', password: PASSWORD }), 'post', '/auth/login');
      await check(api.post('/auth/login', { username: 'ada', password: PASSWORD }), 'post', '/auth/login');
      await check(api.get('/auth/session'), 'get', '/auth/session');
      await check(api.get('/account/email'), 'get', '/account/email');
      await check(api.get('/account/providers'), 'get', '/account/providers');
      await check(api.delete('/account/providers', { provider: 'nobody', account: 'x' }), 'delete', '/account/providers');
      await check(api.get('/auth/sessions'), 'get', '/auth/sessions');
      await check(api.get('/account/authenticators'), 'get', '/account/authenticators');
      await check(api.get('/account/authenticators/totp'), 'get', '/account/authenticators/totp');
      await check(api.delete('/auth/session'), 'delete', '/auth/session');
      expect(checked).toEqual(
        expect.arrayContaining([
          'post /auth/login 400',
          'post /auth/login 200',
          'post /auth/login 409',
          'get /auth/session 401',
          'get /account/authenticators/totp 404',
          'get /auth/provider/signup 409',
          'post /auth/provider/token 400',
          'get /account/providers 200',
          'delete /account/providers 400',
        ]),
      );
      await app.close();
    });

    it("describes the WebAuthn routes' real answers: each status is listed and each body fits its schema", async () => {
      const { app } = await setUp(true, { ...PASSKEYS, ACCOUNT_EMAIL_VERIFICATION: 'mandatory' });
      await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      const api = new HeadlessTestClient(app, client, latchkey);
      const authenticator = new SoftwareAuthenticator('http://testserver');
      const check = async (response: Promise<HeadlessResponse>, method: string, path: string) => {
        const answer = await response;
        const validate = responseValidator(`/_allauth/{client}/v1${path}`, method, answer.status, passkeysDocument);
        expect(validate, `${method} ${path} ${answer.status} is not described`).toBeDefined();
        expect(validate!(answer.body), `${method} ${path} ${answer.status}: ${ajv.errorsText(validate!.errors)}`).toBe(true);
        return answer;
      };
      await check(api.get('/config'), 'get', '/config');
      await check(api.get('/auth/webauthn/signup'), 'get', '/auth/webauthn/signup');
      await check(api.post('/auth/webauthn/signup', { email: 'not an address' }), 'post', '/auth/webauthn/signup');
      await check(api.post('/auth/webauthn/login', { credential: {} }), 'post', '/auth/webauthn/login');
      await check(api.post('/auth/login', { username: 'ada', password: PASSWORD }), 'post', '/auth/login');
      const creation = await check(api.get('/account/authenticators/webauthn?passwordless'), 'get', '/account/authenticators/webauthn');
      const created = authenticator.create((creation.body.data as { creation_options: { publicKey: Parameters<SoftwareAuthenticator['create']>[0] } }).creation_options.publicKey);
      const added = await check(api.post('/account/authenticators/webauthn', { name: 'Laptop', credential: created }), 'post', '/account/authenticators/webauthn');
      await check(api.get('/account/authenticators'), 'get', '/account/authenticators');
      await check(api.put('/account/authenticators/webauthn', { id: added.body.data.id, name: 'Phone' }), 'put', '/account/authenticators/webauthn');
      await check(api.put('/account/authenticators/webauthn', { id: 999999, name: 'Phone' }), 'put', '/account/authenticators/webauthn');
      const reauthentication = await check(api.get('/auth/webauthn/reauthenticate'), 'get', '/auth/webauthn/reauthenticate');
      const assertion = authenticator.get((reauthentication.body.data as { request_options: { publicKey: Parameters<SoftwareAuthenticator['get']>[0] } }).request_options.publicKey);
      await check(api.post('/auth/webauthn/reauthenticate', { credential: assertion }), 'post', '/auth/webauthn/reauthenticate');
      await check(api.post('/auth/webauthn/login', { credential: assertion }), 'post', '/auth/webauthn/login');
      await check(api.delete('/account/authenticators/webauthn', { authenticators: [added.body.data.id] }), 'delete', '/account/authenticators/webauthn');
      await check(api.delete('/auth/session'), 'delete', '/auth/session');
      await app.close();
    });
  });
});
