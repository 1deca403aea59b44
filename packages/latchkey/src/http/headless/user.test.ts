/**
 * The headless API's user object with the project's own fields (docs/user-fields.md): every field
 * declared `api: true` is part of it, under its name and as JSON gives its value, and no other
 * field is; the document at /_allauth/openapi.json declares the same members. For both clients on
 * every database.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../account/users.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { servedHeadlessDocument } from '../../testing/headless-openapi.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { TEST_USER_FIELD_MIGRATIONS, TEST_USER_FIELDS } from '../../testing/user-fields.js';

const PASSWORD = 'a long enough passphrase';

/** A value in every field of TEST_USER_FIELDS: company, birth_date, plan and seats are `api: true`, the others are not. */
const ADA_FIELDS: Record<string, unknown> = {
  company: 'Analytical Engines',
  birth_date: '1815-12-10',
  plan: 'team',
  newsletter: true,
  seats: 3,
  bio: 'Wrote the first program.',
  billing_email: 'accounts@example.com',
  website: 'https://example.com/ada',
};

describe.each(testDatabaseKinds())("the headless user with the project's fields on %s", (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(client: 'browser' | 'app'): Promise<HeadlessTestClient> {
    latchkey = await createTestLatchkey({ kind, userFields: TEST_USER_FIELDS, projectMigrations: TEST_USER_FIELD_MIGRATIONS });
    return new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), client, latchkey);
  }

  describe.each(['browser', 'app'] as const)('%s client', (client) => {
    it('carries every field declared api: true, and no other, in the login and session answers', async () => {
      const api = await setUp(client);
      const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', password: PASSWORD, emailVerified: true, ...ADA_FIELDS });
      const expected = {
        id: ada.id,
        display: 'Ada Lovelace',
        has_usable_password: true,
        email: 'ada@example.com',
        username: 'ada',
        company: 'Analytical Engines',
        birth_date: '1815-12-10',
        plan: 'team',
        seats: 3,
      };

      const login = await api.post('/auth/login', { username: 'ada', password: PASSWORD });
      expect(login.status).toBe(200);
      expect(login.body.data.user).toEqual(expected);

      const session = await api.get('/auth/session');
      expect(session.status).toBe(200);
      expect(session.body.data.user).toEqual(expected);
      expect(JSON.stringify(session.body)).not.toMatch(/newsletter|Wrote the first program|accounts@example\.com|example\.com\/ada/);
    });

    it("gives a field's empty value to a user who has none: '' for text, null for a day or a number", async () => {
      const api = await setUp(client);
      await createUser(latchkey.deps, { username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
      expect((await api.post('/auth/login', { username: 'grace', password: PASSWORD })).status).toBe(200);
      const session = await api.get('/auth/session');
      expect(session.body.data.user).toMatchObject({ username: 'grace', company: '', birth_date: null, plan: '', seats: null });
      expect(session.body.data.user).not.toHaveProperty('newsletter');
    });
  });
});

describe("the OpenAPI document's User", () => {
  it('declares every field declared api: true, each always sent, and no other', async () => {
    const document = await servedHeadlessDocument({}, { userFields: TEST_USER_FIELDS, projectMigrations: TEST_USER_FIELD_MIGRATIONS });
    const user = (document.components as { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> }).schemas.User!;
    expect(Object.keys(user.properties)).toEqual(['id', 'display', 'has_usable_password', 'email', 'username', 'company', 'birth_date', 'plan', 'seats']);
    expect(user.required).toEqual(['id', 'display', 'has_usable_password', 'company', 'birth_date', 'plan', 'seats']);
    expect(user.properties.company).toEqual({ type: 'string', description: 'Company: Where you work.' });
    // OpenAPI 3.0's way of saying "or null".
    expect(user.properties.seats).toEqual({ type: 'integer', nullable: true, description: 'Seats' });
  });

  it("is allauth's own in a project without fields", async () => {
    const document = await servedHeadlessDocument();
    const user = (document.components as { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> }).schemas.User!;
    expect(Object.keys(user.properties)).toEqual(['id', 'display', 'has_usable_password', 'email', 'username']);
    expect(user.required).toEqual(['id', 'display', 'has_usable_password']);
  });
});
