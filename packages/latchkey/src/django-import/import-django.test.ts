/**
 * The journey issue 21 promises: a real Django project's accounts (made by Django 3.2, allauth,
 * Django REST framework and the fixture project in test/fixtures/django-project/) imported into
 * Latchkey, from its database and from its dumpdata file, on SQLite and PostgreSQL, for both
 * username types. Afterwards every user signs in with their old password (and the hash is
 * upgraded), every token authenticates, TOTP codes from the old secrets work, unused recovery
 * codes work and used ones do not, and a returning OpenID Connect user lands in their account.
 * The project's own user fields come from the users.User columns of the same name, or of the one
 * djangoColumn names, typed; a column the project does not declare is named, and a value that
 * does not fit its field stops the import.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../account/model.js';
import { algorithmOf } from '../account/passwords/hasher.js';
import type { UsernameType } from '../config/settings.js';
import { defineUserFields, type UserFieldSet } from '../core/user-fields.js';
import { createKyselyImportTarget } from '../storage/kysely/django-import-target.js';
import { openDjangoDatabase } from '../storage/django/database-source.js';
import { openDjangoDumpdata } from '../storage/django/dumpdata-source.js';
import { ApiTestClient, createApiTestApp, registerTestApiViews } from '../testing/api.js';
import { testDatabaseKinds, type TestDatabaseKind } from '../testing/database.js';
import { djangoFixtureUnavailable, createDjangoFixture, type DjangoFixture } from '../testing/django-fixture.js';
import { DJANGO_PROFILE_FIELDS, DJANGO_PROFILE_FIELDS_MAPPED, userFieldMigrations } from '../testing/django-user-fields.js';
import { HeadlessTestClient } from '../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { totpCodeAt } from '../testing/mfa.js';
import { startTestOidcProvider, type TestOidcProvider } from '../testing/oidc-provider.js';
import type { DjangoSource } from './ports.js';
import { importDjangoAccounts } from './flows/import-accounts.js';
import { verifyDjangoImport } from './flows/verify-import.js';
import { djangoColumnsOf } from './user-fields.js';

const CORP_CLIENT = { client_id: 'corp-client-id', client_secret: 'corp-client-secret' };
const SOURCES = ['database URL', 'dumpdata file'] as const;
type Source = (typeof SOURCES)[number];

/** Each database kind imports from a Django project on the same kind, for both username types. */
const cases = testDatabaseKinds().flatMap((kind) => (['username', 'email'] satisfies UsernameType[]).map((usernameType) => ({ kind, usernameType })));

describe.skipIf(djangoFixtureUnavailable() !== null).each(cases)('import-django into $kind, usernameType $usernameType', ({ kind, usernameType }: { kind: TestDatabaseKind; usernameType: UsernameType }) => {
  let fixture: DjangoFixture;
  let oidc: TestOidcProvider;

  beforeAll(async () => {
    fixture = await createDjangoFixture({ usernameType, database: kind });
    const corpAccount = fixture.manifest.socialAccounts.find((account) => account.provider === 'corp')!;
    oidc = await startTestOidcProvider({
      clients: [{ ...CORP_CLIENT, redirect_uris: ['http://testserver/accounts/oidc/corp/login/callback/'] }],
      accounts: [{ sub: corpAccount.uid, claims: { email: 'frank@example.com', email_verified: true, name: 'Frank Corp' } }],
    });
  }, 120_000);

  afterAll(async () => {
    await oidc?.close();
    await fixture?.cleanup();
  });

  /** The source, reading the columns `userFields` come from, as `manage import-django` opens it. */
  function openSource(source: Source, userFields: UserFieldSet = DJANGO_PROFILE_FIELDS): Promise<DjangoSource> {
    const options = { projectColumns: djangoColumnsOf(userFields.fields) };
    return source === 'database URL' ? openDjangoDatabase(fixture.databaseUrl, options) : openDjangoDumpdata(fixture.dumpdataPath, options);
  }

  /**
   * A site whose settings name the company's OpenID Connect server as allauth's did (provider_id
   * "corp"), and whose project declares `userFields` (company and birth_date unless told).
   */
  function site(userFields: UserFieldSet = DJANGO_PROFILE_FIELDS): Promise<TestLatchkey> {
    return createTestLatchkey({
      kind,
      usernameType,
      userFields,
      projectMigrations: userFieldMigrations(userFields),
      settings: { SOCIALACCOUNT_PROVIDERS: { openid_connect: { APPS: [{ provider_id: 'corp', name: 'Corp SSO', ...CORP_CLIENT, secret: CORP_CLIENT.client_secret, settings: { server_url: oidc.issuer } }] } } },
    });
  }

  function importTarget(latchkey: TestLatchkey) {
    const { database } = latchkey;
    return createKyselyImportTarget(database.kysely, database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
  }

  /** A user as Latchkey holds them, the project's fields among their properties. */
  async function storedUser(latchkey: TestLatchkey, id: number): Promise<User & Record<string, unknown>> {
    return (await latchkey.deps.store.users.findById(id)) as User & Record<string, unknown>;
  }

  // Each database imports from both sources across the two username types: once, with the whole
  // journey after it, from one source, then again from the other, which finds everything there.
  const [from, thenFrom] = (kind === 'sqlite') === (usernameType === 'username') ? SOURCES : ([...SOURCES].reverse() as [Source, Source]);

  it(`from its ${from}: the reverse check passes, everyone signs in as before, and a second run from its ${thenFrom} changes nothing`, async () => {
    const latchkey = await site();
    const source = await openSource(from);
    try {
      latchkey.clock.set(oidc.now());
      const target = importTarget(latchkey);
      const report = await importDjangoAccounts(latchkey.deps, source, target, { dryRun: false });
      const { manifest } = fixture;
      expect(report.counts.users).toEqual({ read: manifest.users.length, inserted: manifest.users.length, present: 0, skipped: 0 });
      // The two columns the project does not declare are named, not dropped unsaid.
      expect(report).toMatchObject({ undeclaredColumns: ['newsletter', 'phone_extension'], fieldsWithoutColumn: [] });
      for (const user of manifest.users) {
        const stored = await storedUser(latchkey, user.id);
        expect({ company: stored.company, birth_date: stored.birth_date }, user.login).toEqual({ company: user.profileColumns.company, birth_date: user.profileColumns.birth_date });
      }
      const alice = await storedUser(latchkey, manifest.users[0]!.id);
      expect(alice).toMatchObject({ company: 'Wonderland Ltd', birth_date: '1990-04-01' });
      expect((await storedUser(latchkey, manifest.users[1]!.id)).company).toBe('Bob & Söhne — Baustoffe 山田');
      expect(report.counts.tokens.inserted).toBe(manifest.tokens.length);
      expect(report.counts.authenticators.inserted).toBe(manifest.authenticators.length);
      expect(report.counts.socialAccounts.inserted).toBe(manifest.socialAccounts.length);
      // allauth 0.51 kept the OpenID Connect server's app under its id: skipped, with what to do.
      expect(report.skipped.filter((row) => row.kind === 'socialApps').map((row) => row.reason)).toEqual([expect.stringContaining('configure an openid_connect app with provider_id "corp"')]);
      expect(report.unreadablePasswords).toEqual([]);

      // The reverse check finds everything as the source has it, before anyone signs in (a login
      // upgrades the hash it checks), and a change made behind the import's back, named without its value.
      const checked = await verifyDjangoImport(latchkey.deps, source);
      expect(checked).toMatchObject({ usersInSource: manifest.users.length, usersChecked: manifest.users.length, differences: [] });
      expect(checked.rowsChecked).toBeGreaterThan(manifest.users.length);
      const heidi = manifest.users.find((user) => user.isSuperuser)!;
      await latchkey.deps.store.users.update(heidi.id, { name: 'Someone Else', ...{ birth_date: '1970-01-01' } });
      expect((await verifyDjangoImport(latchkey.deps, source)).differences).toEqual([{ kind: 'users', id: String(heidi.id), problem: 'differs in name, birth_date' }]);

      const headless = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'app', latchkey);
      const loginField = usernameType === 'username' ? 'username' : 'email';
      const withSecondFactor = new Set(manifest.totp.map((totp) => totp.userId));
      const verified = new Set(manifest.emailAddresses.filter((address) => address.verified).map((address) => address.userId));
      const pendingFlow = (answer: { body: { data?: { flows?: { id: string; is_pending?: boolean }[] } } }) => answer.body.data?.flows?.find((flow) => flow.is_pending)?.id;

      for (const user of manifest.users.filter((candidate) => candidate.password !== null)) {
        const client = headless.another();
        const login = await client.post('/auth/login', { [loginField]: user.login, password: user.password });
        if (!user.isActive) {
          // As allauth: the right password of an inactive account is answered with account_inactive.
          expect([login.status, login.body.errors?.[0]?.code], user.login).toEqual([400, 'account_inactive']);
          continue;
        }
        if (!verified.has(user.id)) {
          // As with allauth under mandatory verification: the password is right, the address is not confirmed yet.
          expect([login.status, pendingFlow(login)], user.login).toEqual([401, 'verify_email']);
        } else if (withSecondFactor.has(user.id)) {
          expect([login.status, pendingFlow(login)], user.login).toEqual([401, 'mfa_authenticate']);
          const secret = manifest.totp.find((totp) => totp.userId === user.id)!.secret;
          expect((await client.post('/auth/2fa/authenticate', { code: totpCodeAt(latchkey.deps, secret, latchkey.clock.now()) })).status, user.login).toBe(200);
        } else expect(login.status, user.login).toBe(200);
        // Django's hash was checked as Django checks it, then replaced by Latchkey's preferred one.
        const stored = (await latchkey.deps.store.users.findById(user.id))!;
        expect(stored.password, user.login).not.toBe(user.encodedPassword);
        expect(algorithmOf(stored.password)).toBe(latchkey.deps.settings.PASSWORD_HASHERS[0]);
      }

      const api = new ApiTestClient(await createApiTestApp(latchkey, { routes: registerTestApiViews }), latchkey);
      for (const token of manifest.tokens) {
        const owner = manifest.users.find((user) => user.id === token.userId)!;
        const answer = await api.request('GET', '/api/whoami/', { token: token.key });
        expect(answer.statusCode).toBe(200);
        expect(answer.json()).toMatchObject({ email: owner.email });
      }

      for (const set of manifest.recoveryCodes) {
        const owner = manifest.users.find((user) => user.id === set.userId)!;
        const signIn = async (code: string) => {
          const client = headless.another();
          expect((await client.post('/auth/login', { [loginField]: owner.login, password: owner.password })).status).toBe(401);
          return (await client.post('/auth/2fa/authenticate', { code })).status;
        };
        for (const used of set.usedCodes) expect(await signIn(used)).toBe(400);
        const [unused] = set.unusedCodes;
        expect(await signIn(unused!)).toBe(200);
        expect(await signIn(unused!)).toBe(400);
      }

      const corp = manifest.socialAccounts.find((account) => account.provider === 'corp')!;
      const idToken = await oidc.signIdToken({ clientId: CORP_CLIENT.client_id, sub: corp.uid });
      const returning = await headless.another().post('/auth/provider/token', { provider: 'corp', process: 'login', token: { client_id: CORP_CLIENT.client_id, id_token: idToken } });
      expect(returning.status).toBe(200);
      expect(returning.body.data.user.id).toBe(corp.userId);

      const other = await openSource(thenFrom);
      const again = await importDjangoAccounts(latchkey.deps, other, target, { dryRun: false }).finally(() => other.close());
      expect(Object.values(again.counts).reduce((sum, count) => sum + count.inserted, 0)).toBe(0);
      expect(again.counts.users.present).toBe(manifest.users.length);
    } finally {
      await source.close();
      await latchkey.destroy();
    }
  }, 120_000);

  it(`from its ${thenFrom}: a field reads the column djangoColumn names; integers, booleans and a field Django never had keep their types`, async () => {
    const latchkey = await site(DJANGO_PROFILE_FIELDS_MAPPED);
    const source = await openSource(thenFrom, DJANGO_PROFILE_FIELDS_MAPPED);
    try {
      const report = await importDjangoAccounts(latchkey.deps, source, importTarget(latchkey), { dryRun: false });
      const { manifest } = fixture;
      expect(report.counts.users.inserted).toBe(manifest.users.length);
      expect(report).toMatchObject({ undeclaredColumns: [], fieldsWithoutColumn: [{ field: 'plan', column: 'plan' }] });
      for (const user of manifest.users) {
        const stored = await storedUser(latchkey, user.id);
        const { company, birth_date, phone_extension, newsletter } = user.profileColumns;
        expect({ company: stored.company, birth_date: stored.birth_date, extension: stored.extension, newsletter: stored.newsletter, plan: stored.plan }, user.login).toEqual({
          company,
          birth_date,
          extension: phone_extension,
          newsletter,
          plan: '',
        });
      }
      expect(await storedUser(latchkey, manifest.users[0]!.id)).toMatchObject({ extension: 4021, newsletter: true, birth_date: '1990-04-01' });
      expect(await storedUser(latchkey, manifest.users[1]!.id)).toMatchObject({ extension: null, newsletter: false, birth_date: null });
      expect((await verifyDjangoImport(latchkey.deps, source)).differences).toEqual([]);
    } finally {
      await source.close();
      await latchkey.destroy();
    }
  }, 60_000);

  it(`from its ${from}: values that do not fit their fields stop the import, each one named, and nothing is written`, async () => {
    // Declared shorter than Django's max_length, and a number declared as text.
    const userFields = defineUserFields({
      company: { type: 'text', label: 'Company', maxLength: 10 },
      extension_code: { type: 'text', label: 'Extension', djangoColumn: 'phone_extension' },
    });
    const latchkey = await site(userFields);
    const source = await openSource(from, userFields);
    try {
      const [alice, bob, carol] = fixture.manifest.users;
      const refusal = importDjangoAccounts(latchkey.deps, source, importTarget(latchkey), { dryRun: false });
      await expect(refusal).rejects.toThrow(/^4 value\(s\) of users_user do not fit the user fields this project declares, so nothing was imported\./);
      const message = await refusal.then(() => '', (error: Error) => error.message);
      expect(message.split('\n').slice(1)).toEqual([
        `  users_user ${alice!.id}.company: Ensure this value has at most 10 characters (it has 14).`,
        `  users_user ${alice!.id}.phone_extension (field extension_code): 4021 is not text.`,
        `  users_user ${bob!.id}.company: Ensure this value has at most 10 characters (it has 26).`,
        `  users_user ${carol!.id}.phone_extension (field extension_code): 7 is not text.`,
      ]);
      expect(await latchkey.deps.store.users.count()).toBe(0);
    } finally {
      await source.close();
      await latchkey.destroy();
    }
  }, 60_000);
});
