/**
 * The import's rules, on rows written here: what is skipped and why, what a second run does, a dry
 * run, all-or-nothing, and ids after the import. The journey from a real Django project's database
 * and dumpdata is django-import.test.ts; this file feeds the flow through a source of rows held
 * in memory, so that each rule has the one row that shows it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { allauthRecoveryCodes } from '../../mfa/allauth-recovery-codes.js';
import { authenticatorSecret, unusedRecoveryCodes } from '../../mfa/authenticators.js';
import { totpSecretFromBase32 } from '../../mfa/totp.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { proveKey, testAuthenticator, WEBAUTHN_SETTINGS } from '../../testing/webauthn-headless.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createKyselyImportTarget } from '../../storage/kysely/django-import-target.js';
import type { UsernameType } from '../../config/settings.js';
import { DJANGO_KINDS, type DjangoKind, type DjangoLoginField, type DjangoRows, type DjangoUser } from '../model.js';
import type { DjangoSource } from '../ports.js';
import { importDjangoAccounts, type ImportReport } from './import-accounts.js';
import { verifyDjangoImport } from './verify-import.js';

type Rows = { [K in DjangoKind]?: DjangoRows[K][] };

function memorySource(loginField: DjangoLoginField, rows: Rows): DjangoSource {
  return {
    description: 'rows in memory',
    loginField: () => Promise.resolve(loginField),
    userColumns: () => Promise.resolve({ project: [], absent: [], unread: [] }),
    has: (kind) => Promise.resolve(rows[kind] !== undefined),
    count: (kind) => Promise.resolve(rows[kind]?.length ?? 0),
    async *rows<K extends DjangoKind>(kind: K, batchSize: number) {
      const all = rows[kind] ?? [];
      for (let start = 0; start < all.length; start += batchSize) yield await Promise.resolve(all.slice(start, start + batchSize));
    },
    close: () => Promise.resolve(),
  };
}

const JOINED = new Date('2021-03-04T05:06:07.123Z');
const HASH = 'pbkdf2_sha256$260000$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGg=';

function djangoUser(id: number, fields: Partial<DjangoUser> = {}): DjangoUser {
  return { id, username: `user${id}`, email: `user${id}@example.com`, name: '', password: HASH, isActive: true, isStaff: false, isSuperuser: false, dateJoined: JOINED, lastLogin: null, projectColumns: {}, ...fields };
}

const skippedOf = (report: ImportReport, kind: DjangoKind) => report.skipped.filter((row) => row.kind === kind).map(({ id, reason }) => ({ id, reason }));

for (const kind of testDatabaseKinds()) {
  describe(`import-django's rules on ${kind}`, () => {
    let latchkey: TestLatchkey | undefined;
    afterEach(async () => {
      await latchkey?.destroy();
      latchkey = undefined;
    });

    async function setUp(usernameType: UsernameType): Promise<TestLatchkey> {
      latchkey = await createTestLatchkey({ kind, usernameType });
      return latchkey;
    }

    function run(instance: TestLatchkey, source: DjangoSource, options: { dryRun?: boolean; batchSize?: number } = {}): Promise<ImportReport> {
      const { database } = instance;
      const target = createKyselyImportTarget(database.kysely, database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
      return importDjangoAccounts(instance.deps, source, target, { dryRun: options.dryRun ?? false, batchSize: options.batchSize ?? 2 });
    }

    it('refuses a project whose users log in by the other field, before writing anything', async () => {
      const instance = await setUp('email');
      await expect(run(instance, memorySource('username', { users: [djangoUser(1)] }))).rejects.toThrow(/log in by username.*username_type is "email"/);
      expect(await instance.deps.store.users.count()).toBe(0);
    });

    it('skips, with the reason, users whose username only differs in case, and everything of theirs', async () => {
      const instance = await setUp('username');
      const source = memorySource('username', {
        users: [djangoUser(1, { username: 'Bob' }), djangoUser(2, { username: 'bob' }), djangoUser(3, { username: null })],
        emailAddresses: [{ id: 10, userId: 2, email: 'user2@example.com', verified: true, primary: true }],
        tokens: [{ key: 'a'.repeat(40), userId: 2, created: JOINED }],
      });
      const report = await run(instance, source);
      expect(report.counts.users).toEqual({ read: 3, inserted: 1, present: 0, skipped: 2 });
      expect(skippedOf(report, 'users')).toEqual([
        { id: '2', reason: "its username is user 1's in Latchkey, which compares usernames ignoring case" },
        { id: '3', reason: 'it has no username, which users of this project log in with' },
      ]);
      expect(skippedOf(report, 'emailAddresses')).toEqual([{ id: '10', reason: 'its user (id 2) was not imported' }]);
      expect(skippedOf(report, 'tokens')).toEqual([{ id: 'of user 2', reason: 'its user (id 2) was not imported' }]);
      expect(await instance.deps.store.users.findById(1)).toMatchObject({ username: 'Bob', password: HASH, dateJoined: JOINED });
    });

    it('keeps ids, finds everything there on a second run and changes nothing; new users later get ids past them', async () => {
      const instance = await setUp('email');
      const source = memorySource('email', {
        users: [djangoUser(7), djangoUser(9, { email: 'Nine@Example.COM' })],
        emailAddresses: [
          { id: 70, userId: 7, email: 'user7@example.com', verified: true, primary: true },
          { id: 90, userId: 9, email: 'nine@example.com', verified: false, primary: true },
        ],
        permissions: [
          { userId: 7, appLabel: 'users', codename: 'view_user', group: null },
          { userId: 7, appLabel: 'authtoken', codename: 'delete_token', group: 'Support' },
          { userId: 7, appLabel: 'sites', codename: 'change_site', group: null },
        ],
      });
      const first = await run(instance, source);
      expect(first.counts.users).toEqual({ read: 2, inserted: 2, present: 0, skipped: 0 });
      expect(await instance.deps.store.users.findById(9)).toMatchObject({ email: 'nine@example.com' });
      expect(await instance.deps.store.adminPermissions.listForUser(7)).toEqual(
        expect.arrayContaining([
          { model: 'users.user', action: 'view' },
          { model: 'authtoken.tokenproxy', action: 'delete' },
        ]),
      );
      expect(skippedOf(first, 'permissions')).toEqual([{ id: 'sites.change_site of user 7', reason: 'Latchkey\'s admin does not manage "sites.site"' }]);

      const second = await run(instance, source);
      for (const counted of DJANGO_KINDS) expect(second.counts[counted].inserted).toBe(0);
      expect(second.counts.users).toEqual({ read: 2, inserted: 0, present: 2, skipped: 0 });
      expect(second.counts.emailAddresses.present).toBe(2);

      const later = await instance.deps.store.users.create({ email: 'later@example.com', password: HASH, dateJoined: JOINED });
      expect(later.id).toBeGreaterThan(9);
      expect((await verifyDjangoImport(instance.deps, source)).differences).toEqual([]);
    });

    it('skips a user whose id is another Latchkey user, and one whose email another holds', async () => {
      const instance = await setUp('email');
      const existing = await instance.deps.store.users.create({ email: 'owner@example.com', password: HASH, dateJoined: JOINED });
      const report = await run(instance, memorySource('email', { users: [djangoUser(existing.id), djangoUser(50, { email: 'owner@example.com' })] }));
      expect(skippedOf(report, 'users')).toEqual([
        { id: String(existing.id), reason: `id ${existing.id} is another user's in Latchkey` },
        { id: '50', reason: `its email address is user ${existing.id}'s in Latchkey` },
      ]);
    });

    it('skips a second primary address, an address another user verified, and a malformed token key', async () => {
      const instance = await setUp('email');
      const report = await run(
        instance,
        memorySource('email', {
          users: [djangoUser(1), djangoUser(2)],
          emailAddresses: [
            { id: 1, userId: 1, email: 'shared@example.com', verified: true, primary: true },
            { id: 2, userId: 1, email: 'user1@example.com', verified: true, primary: true },
            { id: 3, userId: 2, email: 'shared@example.com', verified: true, primary: false },
          ],
          tokens: [{ key: 'NOT-A-KEY', userId: 1, created: JOINED }],
        }),
      );
      expect(skippedOf(report, 'emailAddresses')).toEqual([
        { id: '2', reason: 'the user has another primary address (id 1)' },
        { id: '3', reason: 'another user has verified this address (email address id 1)' },
      ]);
      expect(skippedOf(report, 'tokens')).toEqual([{ id: 'of user 1', reason: 'its key is not 40 lower-case hexadecimal characters, as Django REST framework makes them' }]);
    });

    it("imports allauth's WebAuthn keys, which then sign their users in as passkeys", async () => {
      latchkey = await createTestLatchkey({ kind, usernameType: 'email', settings: WEBAUTHN_SETTINGS });
      // What allauth.mfa stored for a passkey: the browser's registration response, made for the
      // site's domain and the user's id as its user handle.
      const device = testAuthenticator();
      const credential = device.create({
        rp: { id: 'testserver', name: 'Test Site' },
        user: { id: isoBase64URL.fromUTF8String('7'), name: 'user7@example.com', displayName: 'user7@example.com' },
        challenge: isoBase64URL.fromBuffer(new Uint8Array(32)),
        pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
      const report = await run(
        latchkey,
        memorySource('email', {
          users: [djangoUser(7)],
          emailAddresses: [{ id: 70, userId: 7, email: 'user7@example.com', verified: true, primary: true }],
          authenticators: [
            { id: 3, userId: 7, type: 'webauthn', data: { name: 'Phone', credential, passwordless: true }, createdAt: JOINED, lastUsedAt: null },
            { id: 4, userId: 7, type: 'webauthn', data: { name: 'Broken', credential: { id: 'abc' }, passwordless: false }, createdAt: JOINED, lastUsedAt: null },
          ],
        }),
      );
      expect(report.counts.authenticators).toEqual({ read: 2, inserted: 1, present: 0, skipped: 1 });
      expect(skippedOf(report, 'authenticators')).toEqual([{ id: '4', reason: 'its WebAuthn credential cannot be read' }]);

      const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'app', latchkey);
      const signedIn = await proveKey(api, '/auth/webauthn/login', device);
      expect(signedIn.status).toBe(200);
      expect(signedIn.body.data.user).toMatchObject({ id: 7 });
    });

    it("opens TOTP secrets and recovery seeds the project's MFA adapter encrypted, with the decrypt it is given", async () => {
      const instance = await setUp('email');
      const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      const seed = 'ab'.repeat(40);
      const sealed = (text: string) => `enc:${Buffer.from(text).toString('base64')}`;
      const source = memorySource('email', {
        users: [djangoUser(1)],
        authenticators: [
          { id: 1, userId: 1, type: 'totp', data: { secret: sealed(secret) }, createdAt: JOINED, lastUsedAt: null },
          { id: 2, userId: 1, type: 'recovery_codes', data: { seed: sealed(seed), used_mask: 1 }, createdAt: JOINED, lastUsedAt: null },
        ],
      });
      const { database } = instance;
      const target = createKyselyImportTarget(database.kysely, database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
      const unopened = await importDjangoAccounts(instance.deps, source, target, { dryRun: true });
      expect(skippedOf(unopened, 'authenticators').map((row) => row.reason)).toEqual([expect.stringContaining('TOTP secret cannot be read'), expect.stringContaining('recovery codes cannot be read')]);

      const decrypt = (stored: string) => Buffer.from(stored.replace(/^enc:/, ''), 'base64').toString();
      const report = await importDjangoAccounts(instance.deps, source, target, { dryRun: false, decrypt });
      expect(report.counts.authenticators).toEqual({ read: 2, inserted: 2, present: 0, skipped: 0 });
      const [totp, codes] = await instance.deps.store.authenticators.listForUser(1);
      expect(Buffer.from(authenticatorSecret(instance.deps.settings, totp!)!).toString('hex')).toBe(Buffer.from(totpSecretFromBase32(secret)!).toString('hex'));
      expect(await unusedRecoveryCodes(instance.deps, codes!)).toEqual(allauthRecoveryCodes(new Uint8Array(Buffer.from(seed, 'ascii'))).slice(1));
      expect((await verifyDjangoImport(instance.deps, source, { decrypt })).differences).toEqual([]);
    });

    it('imports thousands of users in batches, saying after each how far it is', async () => {
      const instance = await setUp('email');
      const users = Array.from({ length: 2500 }, (_, index) => djangoUser(index + 1));
      const emailAddresses = users.map((user) => ({ id: user.id, userId: user.id, email: user.email, verified: true, primary: true }));
      const { database } = instance;
      const target = createKyselyImportTarget(database.kysely, database.dialect, { usernameType: database.usernameType, userFields: database.userFields.fields });
      const progress: string[] = [];
      const report = await importDjangoAccounts(instance.deps, memorySource('email', { users, emailAddresses }), target, {
        dryRun: false,
        batchSize: 1000,
        onProgress: ({ kind, done, total }) => progress.push(`${kind} ${done}/${total}`),
      });
      expect(report.counts.users).toEqual({ read: 2500, inserted: 2500, present: 0, skipped: 0 });
      expect(report.counts.emailAddresses.inserted).toBe(2500);
      expect(progress).toEqual(['users 1000/2500', 'users 2000/2500', 'users 2500/2500', 'emailAddresses 1000/2500', 'emailAddresses 2000/2500', 'emailAddresses 2500/2500']);
      expect(await instance.deps.store.users.findByEmail('user2500@example.com')).toMatchObject({ id: 2500 });
    });

    it('writes nothing on a dry run, and reports what a real run would', async () => {
      const instance = await setUp('email');
      const report = await run(instance, memorySource('email', { users: [djangoUser(1), djangoUser(2)] }), { dryRun: true });
      expect(report.counts.users).toEqual({ read: 2, inserted: 2, present: 0, skipped: 0 });
      expect(await instance.deps.store.users.count()).toBe(0);
    });

    it('writes nothing when the import fails part way', async () => {
      const instance = await setUp('email');
      const source = memorySource('email', { users: [djangoUser(1), djangoUser(2), djangoUser(3)] });
      const failing: DjangoSource = {
        ...source,
        async *rows<K extends DjangoKind>(kind: K, batchSize: number) {
          yield* source.rows(kind, batchSize);
          if (kind === 'emailAddresses') throw new Error('the connection to the source was lost');
        },
      };
      await expect(run(instance, failing, { batchSize: 1 })).rejects.toThrow('the connection to the source was lost');
      expect(await instance.deps.store.users.count()).toBe(0);
    });
  });
}
