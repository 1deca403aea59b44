/**
 * The headless routes refuse what their declaration (the document at /_allauth/openapi.json)
 * says they cannot take: each required field, missing, is named in a 400; a field of the wrong
 * type is refused before any flow runs; and nothing changes. The refusals' shape is checked against
 * allauth's own document by the test client, as for every answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';

type Json = Record<string, unknown>;

const PASSWORD = 'a long enough passphrase';
const METHODS = ['post', 'put', 'patch', 'delete'] as const;

/** Each operation both clients have with a JSON body, and the fields its body requires. */
function operationsWithRequiredFields(document: Json): { method: (typeof METHODS)[number]; path: string; required: string[] }[] {
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  const resolved = (schema: Json): Json => (typeof schema.$ref === 'string' ? schemas[schema.$ref.split('/').pop()!]! : schema);
  const found = [];
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    if (!path.startsWith('/_allauth/{client}/v1/')) continue;
    for (const method of METHODS) {
      const body = (item[method]?.requestBody as { content?: Record<string, { schema: Json }> } | undefined)?.content?.['application/json']?.schema;
      const required = body ? ((resolved(body).required as string[] | undefined) ?? []) : [];
      if (required.length > 0) found.push({ method, path: path.slice('/_allauth/{client}/v1'.length), required });
    }
  }
  return found;
}

describe('what a headless route declares is what it requires', () => {
  let latchkey: TestLatchkey;
  let document: Json;
  beforeAll(async () => {
    latchkey = await createTestLatchkey({ settings: { HEADLESS_SERVE_SPECIFICATION: true } });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const app = await HeadlessTestClient.createApp(latchkey);
    document = (await app.inject({ url: '/_allauth/openapi.json', headers: { host: 'testserver' } })).json();
  });
  afterAll(() => latchkey.destroy());

  const client = async () => new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'app', latchkey);

  it('refuses a body without a required field, naming each one, signed in or not', async () => {
    const operations = operationsWithRequiredFields(document);
    // Enough of the API to mean something: login, signup, password reset, codes, email, sessions, providers.
    expect(operations.length).toBeGreaterThanOrEqual(12);
    const anonymous = await client();
    const signedIn = await client();
    expect((await signedIn.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
    for (const api of [anonymous, signedIn]) {
      for (const { method, path, required } of operations) {
        const response = await api.request(method.toUpperCase() as 'POST', path, {}, { validate: false });
        expect(response.status, `${method} ${path}`).toBe(400);
        const errors = response.body.errors as { param?: string; code: string; message: string }[];
        expect(errors.map((error) => error.param).sort(), `${method} ${path}`).toEqual([...required].sort());
      }
    }
    expect(latchkey.mailer.outbox).toEqual([]);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it("answers a missing field as Django's form does, unless the field declares allauth's own refusal", async () => {
    const api = await client();
    const login = await api.post('/auth/login', { username: 'ada' });
    expect(login.status).toBe(400);
    expect(login.body.errors).toEqual([{ message: 'This field is required.', code: 'required', param: 'password' }]);
    // allauth reads a missing reset key as a link that does not work.
    const reset = await api.post('/auth/password/reset', { password: 'another long passphrase' });
    expect(reset.body.errors).toEqual([expect.objectContaining({ code: 'token_invalid', param: 'key' })]);
  });

  it('refuses a field of the wrong type before the flow sees it: no login is counted, nothing is mailed', async () => {
    const api = await client();
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const response = await api.post('/auth/login', { username: 'ada', password: { $ne: '' } });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ message: 'Enter a valid value.', code: 'invalid', param: 'password' }]);
    }
    // Twenty refusals of the shape spent none of ada's failed-login allowance.
    expect((await api.post('/auth/login', { username: 'ada', password: PASSWORD })).status).toBe(200);
    const notAnObject = await (await client()).post('/auth/password/request', ['ada@example.com']);
    expect(notAnObject.status).toBe(400);
    expect(notAnObject.body.errors).toEqual([{ message: 'Send a JSON object of fields.', code: 'invalid' }]);
    expect(latchkey.mailer.outbox).toEqual([]);
  });
});
