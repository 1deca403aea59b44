/**
 * The two OpenAPI documents the interactive docs show, as the server serves them: the API layer's
 * /api/schema/ (with a project's own views) and the headless API's /_allauth/openapi.json (with
 * every optional part switched on). Each is a valid OpenAPI 3 document, checked against the
 * specification's own JSON Schema, and every `$ref` in it leads somewhere.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { SettingValues } from '../../config/settings.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews } from '../../testing/api.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { issueApiToken } from '../../tokens/api-tokens.js';
import type { ApiRoutes } from '../api/views.js';

type Json = Record<string, unknown>;

/** Every optional operation of the headless API: login by code, security keys, passkey login and signup. */
const EVERYTHING: Partial<SettingValues> = {
  HEADLESS_SERVE_SPECIFICATION: true,
  ACCOUNT_LOGIN_BY_CODE_ENABLED: true,
  MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
  MFA_PASSKEY_LOGIN_ENABLED: true,
  MFA_PASSKEY_SIGNUP_ENABLED: true,
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true,
};

/** Every `$ref` anywhere in a JSON value. */
function refsIn(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsIn);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' ? [value] : refsIn(value)));
}

function at(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let current: unknown = document;
  for (const segment of ref.slice(2).split('/')) current = (current as Json | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')];
  return current;
}

async function expectValidOpenApi3(document: Json): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
  expect(result.valid).toBe(true);
  expect(validator.version).toMatch(/^3\./);
  const refs = refsIn(document);
  expect(refs.length).toBeGreaterThan(0);
  for (const ref of refs) expect(at(document, ref), ref).toBeDefined();
}

/** A view of the project's own, declared with its schema, as a project's `api.routes` gives it. */
function projectViews(api: ApiRoutes): void {
  registerTestApiViews(api);
  api.view('/api/reports/:year/', {
    tag: 'reports',
    permission: 'staff',
    methods: {
      get: {
        summary: 'The yearly report',
        description: 'Sign-ups and sign-ins of one year.',
        responses: { 200: { type: 'object', required: ['year', 'signups'], properties: { year: { type: 'integer' }, signups: { type: 'integer' } } } },
        handler: () => Promise.resolve({ year: 2026, signups: 0 }),
      },
    },
  });
}

describe('the OpenAPI documents the docs show', () => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  it("are valid OpenAPI 3, every $ref resolved, and the API's names a project's view as it declares it", async () => {
    latchkey = await createTestLatchkey({ kind: 'sqlite', settings: EVERYTHING });
    app = await createApiTestApp(latchkey, { routes: projectViews, headless: true });
    const grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: 'a long enough passphrase', emailVerified: true, isStaff: true });
    const client = new ApiTestClient(app, latchkey);

    const headless = await client.request('GET', '/_allauth/openapi.json');
    expect(headless.statusCode).toBe(200);
    await expectValidOpenApi3(headless.json());

    const api = await client.request('GET', '/api/schema/', { token: await issueApiToken(latchkey.deps, grace) });
    expect(api.statusCode).toBe(200);
    const schema = api.json<{ paths: Record<string, Record<string, Json>> }>();
    await expectValidOpenApi3(schema);
    const report = schema.paths['/api/reports/{year}/']?.get;
    expect(report).toMatchObject({
      summary: 'The yearly report',
      description: 'Sign-ups and sign-ins of one year.',
      tags: ['reports'],
      parameters: [{ name: 'year', in: 'path', required: true }],
      responses: { 200: { content: { 'application/json': { schema: { required: ['year', 'signups'] } } } } },
    });
  });
});
