import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../../core/errors.js';
import type { TestDatabase } from '../database.js';
import type { NewSocialApp } from '../../socialaccount/model.js';
import { createUser, expectLatchkeyError, settleAll, useFreshDatabase, type ConformanceTarget } from './harness.js';

const JOINED = new Date('2030-01-01T00:00:00.000Z');

function newSocialApp(overrides: Partial<NewSocialApp> = {}): NewSocialApp {
  return {
    provider: 'openid_connect',
    providerId: 'acme',
    name: 'Acme SSO',
    clientId: 'client-1',
    sealedSecret: 'v1.sealed-secret',
    key: '',
    settings: { server_url: 'https://id.example.com', scope: ['openid', 'email'], hidden: false, note: 'Zoë ✓' },
    ...overrides,
  };
}

/**
 * Resolves once a statement touching the token table waits for a lock on PostgreSQL, or after a
 * few seconds. On SQLite there is nothing to wait for: a second writer waits for the first
 * transaction as a whole.
 */
async function waitForLockedTokenStatement(database: TestDatabase): Promise<void> {
  if (database.dialect !== 'postgres') return;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const { rows } = await sql<{ waiting: string }>`
      select count(*) as waiting from pg_stat_activity
      where pid <> pg_backend_pid() and wait_event_type = 'Lock' and query like '%latchkey_social%'`.execute(database.kysely);
    if (Number(rows[0]?.waiting) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function describeSocialAppRepository(target: ConformanceTarget): void {
  const { usernameType } = target;

  describe('SocialAppRepository', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const socialApps = () => database().store.socialApps;

    it('creates an app and finds it by id, with its settings intact', async () => {
      const created = await socialApps().create(newSocialApp());
      expect(typeof created.id).toBe('number');
      expect(created).toEqual({ id: created.id, ...newSocialApp() });
      expect(await socialApps().findById(created.id)).toEqual(created);
      expect(await socialApps().findById(created.id + 1000)).toBeUndefined();
    });

    it('lists every app by provider, then provider id, then id', async () => {
      const github = await socialApps().create(newSocialApp({ provider: 'github', providerId: '', settings: {} }));
      const zeta = await socialApps().create(newSocialApp({ providerId: 'zeta' }));
      const acme = await socialApps().create(newSocialApp({ providerId: 'acme' }));
      const apple = await socialApps().create(newSocialApp({ provider: 'apple', providerId: '', key: 'TEAM123' }));
      expect(await socialApps().list()).toEqual([apple, github, acme, zeta]);
    });

    it('refuses a second app with one provider and provider id, but not with another of either', async () => {
      const first = await socialApps().create(newSocialApp());
      await expectLatchkeyError(socialApps().create(newSocialApp({ name: 'Other', clientId: 'client-2' })), 'social_app_exists');
      await socialApps().create(newSocialApp({ providerId: 'other' }));
      await socialApps().create(newSocialApp({ provider: 'saml' }));
      expect(await socialApps().list()).toHaveLength(3);
      expect(await socialApps().findById(first.id)).toEqual(first);
    });

    it('lets exactly one of ten parallel creations of one provider and provider id succeed', async () => {
      const { values, codes } = await settleAll(Array.from({ length: 10 }, (_, index) => socialApps().create(newSocialApp({ clientId: `client-${index}` }))));
      expect(values).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: 9 }, () => 'social_app_exists'));
      expect(await socialApps().list()).toEqual(values);
    });

    it('lets a transaction catch the refusal and go on', async () => {
      await socialApps().create(newSocialApp());
      const created = await store().transaction(async (repositories) => {
        const refusal = await repositories.socialApps.create(newSocialApp()).catch((reason: unknown) => reason);
        if (!isLatchkeyError(refusal, 'social_app_exists')) throw new Error(`expected 'social_app_exists', got ${String(refusal)}`);
        return repositories.socialApps.create(newSocialApp({ providerId: 'other' }));
      });
      expect(await socialApps().findById(created.id)).toEqual(created);
    });

    it('changes the given fields of an app, leaves the others, and reports an unknown app', async () => {
      const app = await socialApps().create(newSocialApp());
      const other = await socialApps().create(newSocialApp({ providerId: 'other' }));
      const renamed = await socialApps().update(app.id, { name: 'Acme ✓', clientId: 'client-2', settings: { server_url: 'https://id2.example.com' } });
      expect(renamed).toEqual({ ...app, name: 'Acme ✓', clientId: 'client-2', settings: { server_url: 'https://id2.example.com' } });
      expect(await socialApps().findById(app.id)).toEqual(renamed);
      const moved = await socialApps().update(app.id, { providerId: 'acme-2', sealedSecret: '', key: 'TEAM123' });
      expect(moved).toEqual({ ...renamed!, providerId: 'acme-2', sealedSecret: '', key: 'TEAM123' });
      expect(await socialApps().update(app.id, {})).toEqual(moved);
      expect(await socialApps().findById(other.id)).toEqual(other);
      expect(await socialApps().update(other.id + 1000, { name: 'Nobody' })).toBeUndefined();
      expect(await socialApps().update(other.id + 1000, {})).toBeUndefined();
    });

    it("refuses to change an app's provider and provider id to another app's, changing nothing", async () => {
      const app = await socialApps().create(newSocialApp());
      const other = await socialApps().create(newSocialApp({ providerId: 'other', name: 'Other' }));
      await expectLatchkeyError(socialApps().update(other.id, { providerId: 'acme', name: 'Taken' }), 'social_app_exists');
      await socialApps().create(newSocialApp({ provider: 'saml', providerId: 'saml-1' }));
      await expectLatchkeyError(socialApps().update(app.id, { provider: 'saml', providerId: 'saml-1' }), 'social_app_exists');
      expect(await socialApps().list()).toEqual(expect.arrayContaining([app, other]));
      // Within a transaction, the refusal leaves it usable.
      const changed = await store().transaction(async (repositories) => {
        const refusal = await repositories.socialApps.update(other.id, { providerId: 'acme' }).catch((reason: unknown) => reason);
        if (!isLatchkeyError(refusal, 'social_app_exists')) throw new Error(`expected 'social_app_exists', got ${String(refusal)}`);
        return repositories.socialApps.update(other.id, { providerId: 'acme-2' });
      });
      expect(await socialApps().findById(other.id)).toEqual(changed);
      expect(changed?.providerId).toBe('acme-2');
    });

    it('lets exactly one of ten parallel changes to one provider and provider id succeed', async () => {
      const apps = await Promise.all(Array.from({ length: 10 }, (_, index) => socialApps().create(newSocialApp({ providerId: `app-${index}` }))));
      const { values, codes } = await settleAll(apps.map((app) => socialApps().update(app.id, { providerId: 'wanted' })));
      expect(values).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: 9 }, () => 'social_app_exists'));
      expect((await socialApps().list()).filter((app) => app.providerId === 'wanted')).toHaveLength(1);
    });

    it('deletes an app once', async () => {
      const app = await socialApps().create(newSocialApp());
      const other = await socialApps().create(newSocialApp({ providerId: 'other' }));
      expect(await socialApps().delete(app.id)).toBe(true);
      expect(await socialApps().delete(app.id)).toBe(false);
      expect(await socialApps().findById(app.id)).toBeUndefined();
      expect(await socialApps().list()).toEqual([other]);
    });

    it('keeps the tokens of a deleted app with their accounts, detached', async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const account = await store().socialAccounts.create({ userId: jane.id, provider: 'acme', uid: 'jane-1', extraData: {}, dateJoined: JOINED, lastLogin: JOINED });
      const app = await socialApps().create(newSocialApp());
      const other = await socialApps().create(newSocialApp({ providerId: 'other' }));
      const token = await store().socialTokens.save({ accountId: account.id, appId: app.id, sealedToken: 'v1.access', sealedTokenSecret: 'v1.refresh', expiresAt: JOINED });
      const kept = await store().socialTokens.save({ accountId: account.id, appId: other.id, sealedToken: 'v1.other', sealedTokenSecret: '', expiresAt: null });
      expect(await socialApps().delete(app.id)).toBe(true);
      expect(await store().socialTokens.listForAccount(account.id)).toEqual(expect.arrayContaining([{ ...token, appId: null }, kept]));
      expect(await store().socialTokens.listForAccount(account.id)).toHaveLength(2);
    });

    it("drops a deleted app's token where the account already has a detached one, which stays", async () => {
      const jane = await createUser(store(), usernameType, 'jane');
      const account = await store().socialAccounts.create({ userId: jane.id, provider: 'acme', uid: 'jane-1', extraData: {}, dateJoined: JOINED, lastLogin: JOINED });
      const app = await socialApps().create(newSocialApp());
      await store().socialTokens.save({ accountId: account.id, appId: app.id, sealedToken: 'v1.from-app', sealedTokenSecret: '', expiresAt: null });
      const detached = await store().socialTokens.save({ accountId: account.id, appId: null, sealedToken: 'v1.from-settings', sealedTokenSecret: '', expiresAt: null });
      expect(await socialApps().delete(app.id)).toBe(true);
      expect(await store().socialTokens.listForAccount(account.id)).toEqual([detached]);
    });

    it('deletes an app while a parallel save gives one of its accounts a detached token', async () => {
      // On PostgreSQL the deletion does not see the uncommitted detached token, so detaching the
      // app's token waits for it and then collides with it; the deletion must try again rather than
      // fail. On SQLite it waits for the saving transaction to end.
      const jane = await createUser(store(), usernameType, 'jane');
      const account = await store().socialAccounts.create({ userId: jane.id, provider: 'acme', uid: 'jane-1', extraData: {}, dateJoined: JOINED, lastLogin: JOINED });
      const app = await socialApps().create(newSocialApp());
      await store().socialTokens.save({ accountId: account.id, appId: app.id, sealedToken: 'v1.from-app', sealedTokenSecret: '', expiresAt: null });
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let saved: () => void = () => undefined;
      const hasSaved = new Promise<void>((resolve) => (saved = resolve));
      const saving = store().transaction(async (repositories) => {
        const token = await repositories.socialTokens.save({ accountId: account.id, appId: null, sealedToken: 'v1.from-settings', sealedTokenSecret: '', expiresAt: null });
        saved();
        await held;
        return token;
      });
      await hasSaved;
      const deletion = socialApps().delete(app.id);
      await waitForLockedTokenStatement(database());
      release();
      const detached = await saving;
      expect(await deletion).toBe(true);
      expect(await store().socialTokens.listForAccount(account.id)).toEqual([detached]);
    });

    it('reads settings that are not a JSON object as {}', async () => {
      const app = await socialApps().create(newSocialApp());
      await database().kysely.updateTable('latchkey_social_apps').set({ settings: '{"cut short' }).where('id', '=', app.id).execute();
      expect(await socialApps().findById(app.id)).toEqual({ ...app, settings: {} });
      await database().kysely.updateTable('latchkey_social_apps').set({ settings: '[1, 2]' }).where('id', '=', app.id).execute();
      expect((await socialApps().list())[0]?.settings).toEqual({});
    });
  });
}
