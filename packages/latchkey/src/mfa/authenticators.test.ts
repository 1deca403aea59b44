/**
 * The second factors as stored and checked: secrets encrypted and bound to their row, TOTP codes
 * used once (in one process, across instances sharing the database, and with the claims in Redis),
 * the drift window, and recovery codes used once and replaced by a new set.
 */
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { Secret } from 'otpauth';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import { ManualClock } from '../core/clock.js';
import { openLatchkey, type InternalLatchkey } from '../latchkey.js';
import { MemoryMailer } from '../mail/index.js';
import { openDatabase, type Database } from '../storage/database.js';
import type { User } from '../account/model.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../testing/database.js';
import { createTestLatchkey, testSettings, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor, totpCodeAt, type ActivatedTotp } from '../testing/mfa.js';
import { authenticatorSecret, importedRecoveryCodesData, importedTotpData, normalizeCode, recoveryCodeSet, useCode, type ImportedRecoveryCodes } from './authenticators.js';
import { regenerateRecoveryCodes, viewRecoveryCodes } from './flows/recovery-codes.js';
import { mfaOverview } from './flows/manage.js';
import { totpCounter } from './totp.js';
import { testRedisUrl } from '../testing/shared-stores.js';

const PASSWORD = 'a long enough passphrase';
const client = { ip: '203.0.113.7', userAgent: 'vitest' };

/** Every row of every table of the database's own schema, as text: what a dump would show. */
async function dumpEveryTable(database: Database): Promise<{ tables: string[]; text: string }> {
  const db = database.kysely;
  const listed =
    database.dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
  const tables = listed.rows.map((row) => row.name).sort();
  const parts: string[] = [];
  for (const table of tables) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
    parts.push(
      `${table}: ${JSON.stringify(rows.rows, (_key, value: unknown) => {
        if (typeof value === 'bigint') return value.toString();
        if (value instanceof Uint8Array) return `${Buffer.from(value).toString('hex')} ${Buffer.from(value).toString('base64')} ${Buffer.from(value).toString('latin1')}`;
        if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'Buffer') {
          const bytes = Buffer.from((value as { data: number[] }).data);
          return `${bytes.toString('hex')} ${bytes.toString('base64')} ${bytes.toString('latin1')}`;
        }
        return value;
      })}`,
    );
  }
  return { tables, text: parts.join('\n') };
}

/** The forms in which a secret could leak into a dump. */
function encodings(bytes: Uint8Array): string[] {
  const buffer = Buffer.from(bytes);
  return [
    buffer.toString('hex'),
    buffer.toString('hex').toUpperCase(),
    buffer.toString('base64'),
    buffer.toString('base64').replace(/=+$/, ''),
    buffer.toString('base64url'),
    new Secret({ buffer: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) }).base32,
  ];
}

describe.each(testDatabaseKinds())('authenticators on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(settings: Parameters<typeof createTestLatchkey>[0] = {}): Promise<User> {
    latchkey = await createTestLatchkey({ kind, ...settings });
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  it('stores secrets encrypted: no table holds the TOTP secret, the recovery seed or any recovery code', async () => {
    const ada = await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    // Some use, so that the audit log, the used codes and the claims have rows too.
    expect(await useCode(latchkey.deps, ada, totp.code())).toBe('totp');
    expect(await useCode(latchkey.deps, ada, totp.recoveryCodes[0]!)).toBe('recovery_codes');

    const rows = await latchkey.database.kysely.selectFrom('latchkey_authenticators').selectAll().where('user_id', '=', ada.id).orderBy('id').execute();
    expect(rows.map((row) => row.type)).toEqual(['totp', 'recovery_codes']);
    for (const row of rows) {
      const data = JSON.parse(row.data) as Record<string, unknown>;
      expect(Object.keys(data)).toEqual(['secret']);
      expect(data.secret).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    }

    const stored = await latchkey.deps.store.authenticators.listForUser(ada.id);
    const secret = authenticatorSecret(latchkey.settings, stored.find((authenticator) => authenticator.type === 'totp')!)!;
    const seed = authenticatorSecret(latchkey.settings, stored.find((authenticator) => authenticator.type === 'recovery_codes')!)!;
    expect(new Secret({ buffer: secret.slice().buffer }).base32).toBe(totp.secret);
    expect(seed).toHaveLength(32);

    const dump = await dumpEveryTable(latchkey.database);
    expect(dump.tables).toEqual(expect.arrayContaining(['latchkey_authenticators', 'latchkey_recovery_code_uses', 'latchkey_one_time_claims', 'latchkey_audit_log', 'latchkey_users']));
    // The dump does hold the encrypted secrets (so the search below searches something).
    for (const row of rows) expect(dump.text).toContain((JSON.parse(row.data) as { secret: string }).secret);
    const needles = [totp.secret, totp.secret.toLowerCase(), ...encodings(secret), ...encodings(seed), ...totp.recoveryCodes];
    for (const needle of needles) expect(dump.text.includes(needle), `the dump contains ${needle}`).toBe(false);
  });

  it("does not decrypt a secret copied onto another user's row, and refuses its codes", async () => {
    const ada = await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    const adaTotp = await activateTotpFor(latchkey, ada);
    await activateTotpFor(latchkey, bob);
    const db = latchkey.database.kysely;
    for (const type of ['totp', 'recovery_codes'] as const) {
      const adaRow = await db.selectFrom('latchkey_authenticators').select('data').where('user_id', '=', ada.id).where('type', '=', type).executeTakeFirstOrThrow();
      await db.updateTable('latchkey_authenticators').set({ data: adaRow.data }).where('user_id', '=', bob.id).where('type', '=', type).execute();
    }
    for (const authenticator of await latchkey.deps.store.authenticators.listForUser(bob.id)) {
      expect(authenticatorSecret(latchkey.settings, authenticator), authenticator.type).toBeUndefined();
    }
    expect(await useCode(latchkey.deps, bob, adaTotp.code())).toBeUndefined();
    expect(await useCode(latchkey.deps, bob, adaTotp.recoveryCodes[0]!)).toBeUndefined();
    // On its own row the same secret still works.
    expect(await useCode(latchkey.deps, ada, adaTotp.code())).toBe('totp');
    expect(await useCode(latchkey.deps, ada, adaTotp.recoveryCodes[0]!)).toBe('recovery_codes');
  });

  it('does not decrypt a secret under another LATCHKEY_SECRET_KEY', async () => {
    const ada = await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const stored = await latchkey.deps.store.authenticators.listForUser(ada.id);
    const otherKey = { ...latchkey.settings, SECRET_KEY: `${latchkey.settings.SECRET_KEY}-rotated` };
    for (const authenticator of stored) expect(authenticatorSecret(otherKey, authenticator)).toBeUndefined();
    expect(await useCode({ ...latchkey.deps, settings: otherKey }, ada, totp.code())).toBeUndefined();
  });

  it('accepts the current code once and refuses it the second time (replay)', async () => {
    const ada = await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const code = totp.code();
    expect(await useCode(latchkey.deps, ada, code)).toBe('totp');
    expect(await useCode(latchkey.deps, ada, code)).toBeUndefined();
    latchkey.clock.advance(10_000);
    expect(await useCode(latchkey.deps, ada, code)).toBeUndefined();
    // The next time step brings a new code, which works.
    latchkey.clock.advance(20_000);
    expect(totp.code()).not.toBe(code);
    expect(await useCode(latchkey.deps, ada, totp.code())).toBe('totp');
  });

  it('records the last use of the authenticator', async () => {
    const ada = await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    expect((await latchkey.deps.store.authenticators.findForUser(ada.id, 'totp'))!.lastUsedAt).toBeNull();
    await useCode(latchkey.deps, ada, totp.code());
    expect((await latchkey.deps.store.authenticators.findForUser(ada.id, 'totp'))!.lastUsedAt).toEqual(latchkey.clock.now());
  });

  it('accepts exactly one of ten parallel submissions of one fresh code', async () => {
    const ada = await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const code = totp.code();
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => useCode(latchkey.deps, ada, code)));
    expect(outcomes.filter((outcome) => outcome === 'totp')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(9);
  });

  it.each([0, 1])('refuses codes two steps away (t-60 s, t+60 s), and one step away (t±30 s) unless the tolerance is 1: MFA_TOTP_TOLERANCE %i', async (tolerance) => {
    const ada = await setUp({ settings: { MFA_TOTP_TOLERANCE: tolerance } });
    const totp = await activateTotpFor(latchkey, ada);
    // Well past the activation's (used) code, in the middle of a time step, so that ±30 s is
    // exactly one step away.
    latchkey.clock.advance(10 * 30_000 + 15_000);
    const now = latchkey.clock.now().getTime();
    const appAt = (offsetSeconds: number) => totpCodeAt(latchkey.deps, totp.secret, new Date(now + offsetSeconds * 1000));
    expect(await useCode(latchkey.deps, ada, appAt(-60)), 't-60').toBeUndefined();
    expect(await useCode(latchkey.deps, ada, appAt(60)), 't+60').toBeUndefined();
    const oneStepAway = tolerance === 0 ? undefined : 'totp';
    expect(await useCode(latchkey.deps, ada, appAt(-30)), 't-30').toBe(oneStepAway);
    expect(await useCode(latchkey.deps, ada, appAt(30)), 't+30').toBe(oneStepAway);
    // The code of the current step is accepted either way.
    expect(await useCode(latchkey.deps, ada, appAt(0)), 't').toBe('totp');
  });

  it('with a tolerance, keeps a used code refused for as long as it could be accepted', async () => {
    const ada = await setUp({ settings: { MFA_TOTP_TOLERANCE: 1 } });
    const totp = await activateTotpFor(latchkey, ada);
    const code = totp.code();
    expect(await useCode(latchkey.deps, ada, code)).toBe('totp');
    for (let seconds = 5; seconds < 90; seconds += 5) {
      latchkey.clock.advance(5_000);
      expect(await useCode(latchkey.deps, ada, code), `${seconds} s later`).toBeUndefined();
    }
  });

  it('accepts a recovery code once, however it is typed', async () => {
    const ada = await setUp();
    const { recoveryCodes } = await activateTotpFor(latchkey, ada);
    expect(recoveryCodes).toHaveLength(10);
    const [first, second] = recoveryCodes as [string, string];
    expect(await useCode(latchkey.deps, ada, first)).toBe('recovery_codes');
    expect(await useCode(latchkey.deps, ada, first)).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, `${first.slice(0, 4)}-${first.slice(4)}`)).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, ` ${second.slice(0, 4)} - ${second.slice(4)} `)).toBe('recovery_codes');
    expect(await latchkey.deps.store.authenticators.usedRecoveryCodes((await latchkey.deps.store.authenticators.findForUser(ada.id, 'recovery_codes'))!.id)).toEqual([0, 1]);
  });

  it('accepts exactly one of ten parallel uses of one recovery code', async () => {
    const ada = await setUp();
    const { recoveryCodes } = await activateTotpFor(latchkey, ada);
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => useCode(latchkey.deps, ada, recoveryCodes[4]!)));
    expect(outcomes.filter((outcome) => outcome === 'recovery_codes')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(9);
  });

  it('refuses every old recovery code once a new set is generated, and accepts the new ones', async () => {
    const ada = await setUp();
    const { recoveryCodes: old } = await activateTotpFor(latchkey, ada);
    const { codes } = await regenerateRecoveryCodes(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
    for (const code of old) expect(await useCode(latchkey.deps, ada, code), code).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, codes[0]!)).toBe('recovery_codes');
  });

  it('refuses wrong, empty, oversized and non-numeric codes', async () => {
    const ada = await setUp();
    const totp = await activateTotpFor(latchkey, ada);
    const right = totp.code();
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    for (const code of ['', wrong, '00000000', 'abcdef', `${right}0`, right.slice(1), ' '.repeat(65) + right, `${right}\u0000`]) {
      expect(await useCode(latchkey.deps, ada, code), JSON.stringify(code)).toBeUndefined();
    }
    expect(await useCode(latchkey.deps, ada, right)).toBe('totp');
  });

  it('asks nothing of a user without authenticators', async () => {
    await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    expect(await useCode(latchkey.deps, bob, '123456')).toBeUndefined();
  });
});

/**
 * A seed as allauth.mfa makes it (secrets.token_hex(40)) and its ten codes, computed by Python:
 * see ALLAUTH_VECTORS in recovery-codes.test.ts for the script.
 */
const ALLAUTH_SEED = '5f0c8e2a9b7d4c1e3a6f8b2d0e9c7a5b1d3f6e8a0c2b4d6f8e1a3c5b7d9f0e2a4c6b8d1f3e5a7c9b';
const ALLAUTH_CODES = ['82160335', '85966261', '94330147', '77544303', '31297809', '85456773', '00122432', '32489153', '46617306', '92901258'];
/** Codes 0, 2 and 9 used: what allauth's used_mask says after those three were used. */
const ALLAUTH_USED_MASK = 0b10_0000_0101;
/** A TOTP secret as allauth stores it: base64.b32encode of 20 random bytes. */
const ALLAUTH_TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

describe.each(testDatabaseKinds())('second factors imported from django-allauth, on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function setUp(): Promise<User> {
    latchkey = await createTestLatchkey({ kind });
    return createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  }

  /** What the importer does: the authenticators created with the imported data, and the used codes recorded. */
  async function importFor(user: User, recoveryCodes: ImportedRecoveryCodes, totpSecret = ALLAUTH_TOTP_SECRET): Promise<number> {
    const store = latchkey.deps.store.authenticators;
    const createdAt = latchkey.clock.now();
    await store.create({ userId: user.id, type: 'totp', data: importedTotpData(latchkey.settings, user.id, totpSecret)!, createdAt });
    const imported = importedRecoveryCodesData(latchkey.settings, user.id, recoveryCodes)!;
    const codes = await store.create({ userId: user.id, type: 'recovery_codes', data: imported.data, createdAt });
    for (const index of imported.usedIndices) expect(await store.useRecoveryCode(codes.id, index, createdAt)).toBe(true);
    return codes.id;
  }

  const view = (user: User) => viewRecoveryCodes(latchkey.deps, { user, lastAuthenticatedAt: latchkey.clock.now() });

  it("keeps allauth's unused codes working, each once, and refuses the used ones", async () => {
    const ada = await setUp();
    await importFor(ada, { seed: ALLAUTH_SEED, usedMask: ALLAUTH_USED_MASK });
    const unused = ALLAUTH_CODES.filter((_, index) => ![0, 2, 9].includes(index));
    expect(await view(ada)).toEqual({ unused, total: 10 });
    expect((await mfaOverview(latchkey.deps, ada)).recoveryCodes).toMatchObject({ unused: 7, total: 10 });

    for (const index of [0, 2, 9]) expect(await useCode(latchkey.deps, ada, ALLAUTH_CODES[index]!), `used code ${index}`).toBeUndefined();
    // Code 6 has leading zeros, typed as people type them.
    expect(await useCode(latchkey.deps, ada, '0012-2432')).toBe('recovery_codes');
    expect(await useCode(latchkey.deps, ada, '00122432')).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, ALLAUTH_CODES[1]!)).toBe('recovery_codes');
    expect(await useCode(latchkey.deps, ada, ALLAUTH_CODES[1]!)).toBeUndefined();
    expect(await view(ada)).toEqual({ unused: unused.filter((code) => code !== '00122432' && code !== ALLAUTH_CODES[1]), total: 10 });
    // Not Latchkey's own derivation of the same seed, nor a near miss.
    expect(await useCode(latchkey.deps, ada, '12345678')).toBeUndefined();
  });

  it('accepts exactly one of ten parallel uses of one imported code', async () => {
    const ada = await setUp();
    await importFor(ada, { seed: ALLAUTH_SEED, usedMask: 0 });
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => useCode(latchkey.deps, ada, ALLAUTH_CODES[4]!)));
    expect(outcomes.filter((outcome) => outcome === 'recovery_codes')).toHaveLength(1);
  });

  it('keeps listed (migrated) codes working, each once, however they are typed', async () => {
    const ada = await setUp();
    const codes = ['f7kq-2mzp-x9wd', 'h3bn8c4t', 'twice', 'twice'];
    const id = await importFor(ada, { codes });
    expect(await view(ada)).toEqual({ unused: codes, total: 4 });
    expect(await useCode(latchkey.deps, ada, 'f7kq2mzpx9wd')).toBe('recovery_codes');
    expect(await useCode(latchkey.deps, ada, 'f7kq-2mzp-x9wd')).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, 'H3BN8C4T')).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, 'h3bn 8c4t')).toBe('recovery_codes');
    // A code listed twice works twice, as it did in allauth.
    expect(await useCode(latchkey.deps, ada, 'twice')).toBe('recovery_codes');
    expect(await useCode(latchkey.deps, ada, 'twice')).toBe('recovery_codes');
    expect(await useCode(latchkey.deps, ada, 'twice')).toBeUndefined();
    expect(await latchkey.deps.store.authenticators.usedRecoveryCodes(id)).toEqual([0, 1, 2, 3]);
    expect(await view(ada)).toEqual({ unused: [], total: 4 });
  });

  it('stores the imported seed, codes and TOTP secret sealed: no table holds them in clear', async () => {
    const ada = await setUp();
    await importFor(ada, { seed: ALLAUTH_SEED, usedMask: ALLAUTH_USED_MASK });
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    await importFor(bob, { codes: ['listed-code-one', 'listed-code-two'] });
    const rows = await latchkey.database.kysely.selectFrom('latchkey_authenticators').selectAll().orderBy('id').execute();
    expect(rows.map((row) => [row.type, Object.keys(JSON.parse(row.data) as object).sort()])).toEqual([
      ['totp', ['secret']],
      ['recovery_codes', ['scheme', 'secret']],
      ['totp', ['secret']],
      ['recovery_codes', ['scheme', 'secret']],
    ]);
    expect(rows.map((row) => (JSON.parse(row.data) as { scheme?: string }).scheme)).toEqual([undefined, 'allauth', undefined, 'listed']);
    const dump = await dumpEveryTable(latchkey.database);
    const totpBytes = Secret.fromBase32(ALLAUTH_TOTP_SECRET).bytes;
    for (const needle of [ALLAUTH_SEED, ALLAUTH_SEED.toUpperCase(), ALLAUTH_TOTP_SECRET, ...encodings(totpBytes), ...ALLAUTH_CODES, 'listed-code-one', 'listed-code-two']) {
      expect(dump.text.includes(needle), `the dump contains ${needle}`).toBe(false);
    }
  });

  it("refuses the codes of a set whose scheme marker was changed or that was copied onto another user's row", async () => {
    const ada = await setUp();
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    await importFor(ada, { seed: ALLAUTH_SEED, usedMask: 0 });
    await importFor(bob, { codes: ['listed-code-one'] });
    const db = latchkey.database.kysely;
    const rowOf = (user: User) => db.selectFrom('latchkey_authenticators').select(['id', 'data']).where('user_id', '=', user.id).where('type', '=', 'recovery_codes').executeTakeFirstOrThrow();
    const adas = await rowOf(ada);
    // Ada's allauth set read as a Latchkey set, or as a list: the secret no longer decrypts.
    for (const scheme of [undefined, 'listed']) {
      const data = { ...(JSON.parse(adas.data) as Record<string, unknown>), scheme };
      await db.updateTable('latchkey_authenticators').set({ data: JSON.stringify(data) }).where('id', '=', adas.id).execute();
      const altered = (await latchkey.deps.store.authenticators.findForUser(ada.id, 'recovery_codes'))!;
      expect(recoveryCodeSet(latchkey.settings, altered), String(scheme)).toBeUndefined();
      expect(await useCode(latchkey.deps, ada, ALLAUTH_CODES[3]!)).toBeUndefined();
    }
    // Ada's set copied onto Bob's row: bound to Ada, it does not decrypt there.
    await db.updateTable('latchkey_authenticators').set({ data: adas.data }).where('id', '=', (await rowOf(bob)).id).execute();
    expect(await useCode(latchkey.deps, bob, ALLAUTH_CODES[3]!)).toBeUndefined();
    // An unknown marker is no set at all.
    await db.updateTable('latchkey_authenticators').set({ data: JSON.stringify({ ...(JSON.parse(adas.data) as object), scheme: 'other' }) }).where('id', '=', adas.id).execute();
    expect(await view(ada)).toEqual({ unused: [], total: 0 });
  });

  it('replaces an imported set with a Latchkey set on regeneration', async () => {
    const ada = await setUp();
    await importFor(ada, { seed: ALLAUTH_SEED, usedMask: ALLAUTH_USED_MASK });
    const { codes } = await regenerateRecoveryCodes(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
    expect(codes).toHaveLength(latchkey.settings.MFA_RECOVERY_CODE_COUNT);
    const stored = (await latchkey.deps.store.authenticators.findForUser(ada.id, 'recovery_codes'))!;
    expect(Object.keys(stored.data)).toEqual(['secret']);
    expect(await view(ada)).toEqual({ unused: codes, total: latchkey.settings.MFA_RECOVERY_CODE_COUNT });
    for (const code of ALLAUTH_CODES) expect(await useCode(latchkey.deps, ada, code), code).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, codes[0]!)).toBe('recovery_codes');

    // A listed set too.
    await latchkey.deps.store.authenticators.delete(stored.id);
    const listed = importedRecoveryCodesData(latchkey.settings, ada.id, { codes: ['listed-code-one'] })!;
    await latchkey.deps.store.authenticators.create({ userId: ada.id, type: 'recovery_codes', data: listed.data, createdAt: latchkey.clock.now() });
    const again = await regenerateRecoveryCodes(latchkey.deps, { user: ada, client, lastAuthenticatedAt: latchkey.clock.now() });
    expect(Object.keys((await latchkey.deps.store.authenticators.findForUser(ada.id, 'recovery_codes'))!.data)).toEqual(['secret']);
    expect(await useCode(latchkey.deps, ada, 'listed-code-one')).toBeUndefined();
    expect(await useCode(latchkey.deps, ada, again.codes[1]!)).toBe('recovery_codes');
  });

  it("accepts the codes of allauth's TOTP secret, once each", async () => {
    const ada = await setUp();
    await importFor(ada, { seed: ALLAUTH_SEED, usedMask: 0 }, ALLAUTH_TOTP_SECRET.toLowerCase());
    // otpauth's own base32 decoding, independent of the importer's.
    const code = totpCodeAt(latchkey.deps, ALLAUTH_TOTP_SECRET, latchkey.clock.now());
    expect(await useCode(latchkey.deps, ada, code)).toBe('totp');
    expect(await useCode(latchkey.deps, ada, code)).toBeUndefined();
    latchkey.clock.advance(30_000);
    expect(await useCode(latchkey.deps, ada, totpCodeAt(latchkey.deps, ALLAUTH_TOTP_SECRET, latchkey.clock.now()))).toBe('totp');
  });

  it('refuses what cannot be an allauth secret', async () => {
    await setUp();
    const { settings } = latchkey;
    for (const secret of ['', 'not base32!', 'MZXW6YTBO', 'JBSWY3DP EHPK3PXP']) expect(importedTotpData(settings, 1, secret), secret).toBeUndefined();
    const refused: ImportedRecoveryCodes[] = [
      { seed: '', usedMask: 0 },
      { seed: 'sééd', usedMask: 0 },
      { seed: ALLAUTH_SEED, usedMask: -1 },
      { seed: ALLAUTH_SEED, usedMask: 1.5 },
      { seed: ALLAUTH_SEED, usedMask: Number.NaN },
      { codes: ['fine', ''] },
      { codes: ['fine', ' - '] },
      { codes: ['fine', 'x'.repeat(65)] },
      { codes: ['fine', 7 as unknown as string] },
    ];
    for (const imported of refused) expect(importedRecoveryCodesData(settings, 1, imported), JSON.stringify(imported)).toBeUndefined();
    expect(importedRecoveryCodesData(settings, 1, { seed: ALLAUTH_SEED, usedMask: 2 ** 12 + 1 })?.usedIndices).toEqual([0]);
    expect(importedRecoveryCodesData(settings, 1, { codes: [] })?.usedIndices).toEqual([]);
  });
});

describe('normalizeCode', () => {
  it('strips spaces and dashes', () => {
    expect(normalizeCode('123 456')).toBe('123456');
    expect(normalizeCode('1234-5678')).toBe('12345678');
    expect(normalizeCode(' 12\t34 - 56\n')).toBe('123456');
    expect(normalizeCode('123456')).toBe('123456');
  });

  it('rejects anything over 64 characters', () => {
    expect(normalizeCode('1'.repeat(64))).toBe('1'.repeat(64));
    expect(normalizeCode('1'.repeat(65))).toBe('');
    expect(normalizeCode(`${' '.repeat(60)}123456`)).toBe('');
    expect(normalizeCode('x'.repeat(1_000_000))).toBe('');
  });
});

const redisUrl = testRedisUrl();
if (redisUrl !== undefined) {
  describe.each(testDatabaseKinds())('authenticators with the one-time claims in Redis, on %s', (kind) => {
    let projects: TestLatchkey[] = [];
    afterEach(async () => {
      for (const project of projects) await project.destroy();
      projects = [];
    });

    /** The project's TOTP claims in Redis (under its own namespace), removed again after the test. */
    async function claimKeys(userId: number): Promise<string[]> {
      const client = new Redis(redisUrl!);
      try {
        return (await client.keys(`latchkey:*:claim:mfa:totp:${userId}:*`)).sort();
      } finally {
        await client.quit();
      }
    }
    const cleanUp: string[] = [];
    afterEach(async () => {
      if (cleanUp.length === 0) return;
      const client = new Redis(redisUrl);
      try {
        await client.del(...cleanUp.splice(0));
      } finally {
        await client.quit();
      }
    });

    /** A project on Redis, at a time of its own: claims outlive the test, so no other run's keys are at the same time steps. */
    async function project(at: Date): Promise<{ latchkey: TestLatchkey; ada: User; totp: ActivatedTotp; authenticatorId: number; steps: number[] }> {
      const latchkey = await createTestLatchkey({ kind, env: { REDIS_URL: redisUrl! } });
      projects.push(latchkey);
      expect(latchkey.settings.REDIS_URL).toBe(redisUrl);
      latchkey.clock.set(at);
      const ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
      const totp = await activateTotpFor(latchkey, ada);
      const authenticatorId = (await latchkey.deps.store.authenticators.findForUser(ada.id, 'totp'))!.id;
      return { latchkey, ada, totp, authenticatorId, steps: [totpCounter(at, 30), totpCounter(latchkey.clock.now(), 30)] };
    }
    const randomTime = () => new Date(Date.UTC(2030, 0, 1) + randomInt(0, 10_000_000) * 30_000);

    it('accepts exactly one of ten parallel submissions of one fresh code, claimed in Redis', async () => {
      const { latchkey, ada, totp, steps } = await project(randomTime());
      const code = totp.code();
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => useCode(latchkey.deps, ada, code)));
      expect(outcomes.filter((outcome) => outcome === 'totp')).toHaveLength(1);
      expect(await useCode(latchkey.deps, ada, code)).toBeUndefined();

      // The claims (the activation's and this one) are in Redis, under the project's namespace, not in the database.
      const keys = (await claimKeys(ada.id)).filter((key) => steps.some((step) => key.endsWith(`:${step}`)));
      cleanUp.push(...keys);
      expect(keys).toHaveLength(2);
      expect(keys[0]!.startsWith('latchkey:claim:')).toBe(false);
      expect(await latchkey.database.kysely.selectFrom('latchkey_one_time_claims').selectAll().execute()).toEqual([]);
    });

    it('does not let two projects sharing the Redis server block each other’s codes', async () => {
      const at = randomTime();
      const first = await project(at);
      const second = await project(at);
      // The same user id at the same time step: each project's claims are under its own namespace.
      expect(second.ada.id).toBe(first.ada.id);
      expect(second.latchkey.clock.now()).toEqual(first.latchkey.clock.now());
      const outcomes = await Promise.all([useCode(first.latchkey.deps, first.ada, first.totp.code()), useCode(second.latchkey.deps, second.ada, second.totp.code())]);
      expect(outcomes).toEqual(['totp', 'totp']);
      const keys = (await claimKeys(first.ada.id)).filter((key) => first.steps.some((step) => key.endsWith(`:${step}`)));
      cleanUp.push(...keys);
      expect(keys).toHaveLength(4);
      expect(new Set(keys.map((key) => key.slice(0, key.indexOf(':claim:'))))).toHaveProperty('size', 2);
    });
  });
}

describe.each(testDatabaseKinds())('authenticators on two instances sharing one %s database', (kind) => {
  let database: TestDatabase | undefined;
  const instances: InternalLatchkey[] = [];
  afterEach(async () => {
    for (const instance of instances.splice(0)) await instance.close();
    await database?.destroy();
    database = undefined;
  });

  async function twoInstances(): Promise<{ clock: ManualClock; first: InternalLatchkey; second: InternalLatchkey }> {
    const settings = testSettings();
    // A file, not memory, on SQLite: a second connection must see the same database.
    database = await createTestDatabase(kind, settings.USERNAME_TYPE, { sqliteFile: true });
    const clock = new ManualClock();
    const make = (db: Database) => openLatchkey({ settings, clock, mailer: new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL }), database: db, migrations: 'require' });
    const first = await make(database);
    instances.push(first);
    const second = await make(await openDatabase(database.openOptions));
    instances.push(second);
    return { clock, first, second };
  }

  it('accepts the same code sent to both at once exactly once', async () => {
    const { clock, first, second } = await twoInstances();
    const ada = await createUser(first.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const totp = await activateTotpFor({ ...first, clock }, ada);
    const code = totp.code();
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, index) => useCode((index % 2 === 0 ? first : second).deps, ada, code)));
    expect(outcomes.filter((outcome) => outcome === 'totp')).toHaveLength(1);
    expect(await useCode(second.deps, ada, code)).toBeUndefined();
    expect(await useCode(first.deps, ada, code)).toBeUndefined();
  });

  it('accepts one recovery code sent to both at once exactly once', async () => {
    const { clock, first, second } = await twoInstances();
    const ada = await createUser(first.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const { recoveryCodes } = await activateTotpFor({ ...first, clock }, ada);
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, index) => useCode((index % 2 === 0 ? first : second).deps, ada, recoveryCodes[0]!)));
    expect(outcomes.filter((outcome) => outcome === 'recovery_codes')).toHaveLength(1);
  });
});
