/**
 * /api/schema/: staff only (anonymous 403, as cookiecutter-django answers), the document generated
 * from the registered views with DRF's security schemes. The docs page on it, /api/docs/, is
 * tested with the headless API's in kit/interactive-docs.test.ts.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import type { User } from '../../account/model.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews } from '../../testing/api.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { issueApiToken } from '../../tokens/api-tokens.js';

const PASSWORD = 'a long enough passphrase';
type Json = Record<string, unknown>;
type Operation = { operationId: string; security: Json[]; tags: string[]; parameters?: Json[]; requestBody?: Json; responses: Record<string, Json> };

describe.each(testDatabaseKinds())('API schema and docs on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let client: ApiTestClient;
  let ada: User;
  let grace: User;
  beforeEach(async () => {
    latchkey = await createTestLatchkey({ kind, settings: { SITE_NAME: 'Example & Co' } });
    app = await createApiTestApp(latchkey, { routes: registerTestApiViews });
    client = new ApiTestClient(app, latchkey);
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    grace = await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true, isStaff: true });
  });
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  async function staffSchema(): Promise<{ paths: Record<string, Record<string, Operation>>; components: Json; openapi: string; info: Json }> {
    const response = await client.request('GET', '/api/schema/', { token: await issueApiToken(latchkey.deps, grace) });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    return response.json();
  }

  it('gives the schema to staff only: 403 to anonymous callers and to other users', async () => {
    for (const url of ['/api/schema/']) {
      const anonymous = await client.request('GET', url);
      expect(anonymous.statusCode, url).toBe(403);
      expect(anonymous.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
      expect(anonymous.headers['cache-control']).toBe('no-store');
      const user = await client.request('GET', url, { token: await issueApiToken(latchkey.deps, ada) });
      expect(user.statusCode, url).toBe(403);
      expect(user.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
      expect((await client.request('GET', url, { token: 'f'.repeat(40) })).statusCode, url).toBe(401);
    }
    const browser = client.another();
    await browser.logIn('grace', PASSWORD);
    expect((await browser.request('GET', '/api/docs/')).statusCode).toBe(200);
    expect((await browser.request('GET', '/api/schema/')).statusCode).toBe(200);
  });

  it('describes the views with DRF\'s security schemes', async () => {
    const schema = await staffSchema();
    expect(schema.openapi).toBe('3.0.3');
    expect(schema.info).toMatchObject({ title: 'Example & Co API' });
    expect((schema.components as { securitySchemes: Json }).securitySchemes).toEqual({
      tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token-based authentication with required prefix "Token"' },
      cookieAuth: { type: 'apiKey', in: 'cookie', name: latchkey.settings.SESSION_COOKIE_NAME },
    });
    expect(Object.keys(schema.paths).sort()).toEqual(['/api/auth-token/', '/api/broken/', '/api/items/{id}/', '/api/notes/', '/api/open/', '/api/staff-only/', '/api/whoami/']);
    const both = [{ tokenAuth: [] }, { cookieAuth: [] }];
    expect(schema.paths['/api/whoami/']?.get?.security).toEqual(both);
    expect(schema.paths['/api/whoami/']?.get?.operationId).toBe('whoami_retrieve');
    expect(schema.paths['/api/open/']?.get?.security).toEqual([...both, {}]);
    expect(Object.keys(schema.paths['/api/staff-only/']?.get?.responses ?? {})).toEqual(['200', '401', '403']);
    const item = schema.paths['/api/items/{id}/'];
    expect(Object.keys(item ?? {})).toEqual(['get', 'patch', 'delete']);
    expect(item?.get?.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    expect(item?.delete?.responses['204']).toEqual({ description: 'Deleted.' });
    expect(Object.keys((item?.patch?.requestBody as { content: Json }).content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(item?.get?.tags).toEqual(['items']);
  });

  it('describes POST /api/auth-token/ without authentication and DELETE with the token', async () => {
    const authToken = (await staffSchema()).paths['/api/auth-token/'];
    expect(authToken?.post?.security).toEqual([]);
    expect((authToken?.post?.requestBody as { content: Record<string, { schema: Json }> }).content['application/json']?.schema).toMatchObject({
      required: ['username', 'password'],
      properties: { username: { type: 'string' }, password: { type: 'string' }, code: { type: 'string' } },
    });
    expect(authToken?.post?.responses['200']).toMatchObject({ content: { 'application/json': { schema: { properties: { token: { type: 'string' } } } } } });
    expect(authToken?.delete?.security).toEqual([{ tokenAuth: [] }]);
    expect(Object.keys(authToken?.delete?.responses ?? {})).toEqual(['204', '401']);
  });

  it('gives every operation a distinct operationId, and every $ref a target', async () => {
    const schema = await staffSchema();
    const ids = Object.values(schema.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    const refs = [...JSON.stringify(schema).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(Object.keys((schema.components as { schemas: Json }).schemas)).toContain(ref);
  });
});
