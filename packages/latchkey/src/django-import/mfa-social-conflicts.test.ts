/**
 * The import's rules for authenticators and social sign-in's apps, accounts and tokens, each shown
 * on the rows it is about. No database: the stored rows are given as the port would read them.
 */
import { describe, expect, it } from 'vitest';
import type { AuthenticatorType } from '../mfa/model.js';
import type { SocialAccount, SocialApp, SocialToken } from '../socialaccount/model.js';
import { authenticatorConflicts, socialAccountConflicts, socialAppConflicts, socialTokenConflicts } from './mfa-social-conflicts.js';
import type { ImportedAuthenticator, StoredAuthenticator } from './ports.js';
import { settleAgainst as settle } from '../testing/import-conflicts.js';

const WHEN = new Date('2021-03-04T05:06:07Z');

describe('authenticators', () => {
  const imported = (id: number, userId: number, type: AuthenticatorType, credentialId: string | null = null): ImportedAuthenticator => ({
    authenticator: { id, userId, type, data: {}, credentialId, createdAt: WHEN, lastUsedAt: null },
    usedRecoveryCodes: [],
  });
  const stored = (id: number, userId: number, type: AuthenticatorType, credentialId: string | null = null): StoredAuthenticator => ({ id, userId, type, credentialId });

  it('skips a second TOTP authenticator of a user who has one', () => {
    expect(settle(authenticatorConflicts, [imported(5, 1, 'totp')], [stored(3, 1, 'totp')])).toEqual([{ skipped: 'the user has an authenticator of this type in Latchkey already (id 3)' }]);
  });

  it('imports recovery codes beside a TOTP authenticator: one of each type', () => {
    expect(settle(authenticatorConflicts, [imported(5, 1, 'recovery_codes')], [stored(3, 1, 'totp')])).toEqual(['inserted']);
  });

  it('imports every WebAuthn key of a user, however many', () => {
    const rows = [imported(5, 1, 'webauthn', 'cred-a'), imported(6, 1, 'webauthn', 'cred-b')];
    expect(settle(authenticatorConflicts, rows, [stored(3, 1, 'webauthn', 'cred-c')])).toEqual(['inserted', 'inserted']);
  });

  it('skips a WebAuthn key whose credential another authenticator has', () => {
    expect(settle(authenticatorConflicts, [imported(5, 2, 'webauthn', 'cred-a')], [stored(3, 1, 'webauthn', 'cred-a')])).toEqual([{ skipped: 'authenticator 3 has the same WebAuthn credential' }]);
  });

  it('finds an authenticator imported before present, and skips one whose id is another user\'s', () => {
    expect(settle(authenticatorConflicts, [imported(3, 1, 'totp')], [stored(3, 1, 'totp')])).toEqual(['present']);
    expect(settle(authenticatorConflicts, [imported(3, 2, 'totp')], [stored(3, 1, 'totp')])).toEqual([{ skipped: "id 3 is another authenticator's in Latchkey" }]);
  });
});

describe('social apps', () => {
  const app = (id: number, provider: string, providerId = ''): SocialApp => ({ id, provider, providerId, name: provider, clientId: 'client', sealedSecret: '', key: '', settings: {} });

  it('keeps the app Latchkey has for a provider, and skips the imported one', () => {
    expect(settle(socialAppConflicts, [app(9, 'github')], [{ id: 1, provider: 'github', providerId: '' }])).toEqual([{ skipped: 'Latchkey has an app for this provider already (id 1)' }]);
  });

  it('imports a second OpenID Connect app with another provider_id', () => {
    expect(settle(socialAppConflicts, [app(9, 'openid_connect', 'corp')], [{ id: 1, provider: 'openid_connect', providerId: 'partner' }])).toEqual(['inserted']);
  });
});

describe('social accounts', () => {
  const account = (id: number, userId: number, provider: string, uid: string): SocialAccount => ({ id, userId, provider, uid, extraData: {}, dateJoined: WHEN, lastLogin: WHEN });

  it('skips a provider account that signs someone in already, so it keeps signing in that user', () => {
    expect(settle(socialAccountConflicts, [account(9, 2, 'github', '42')], [{ id: 1, provider: 'github', uid: '42' }])).toEqual([{ skipped: 'social account 1 in Latchkey is the same provider account' }]);
  });

  it('imports the same uid at another provider: uids are only unique per provider', () => {
    expect(settle(socialAccountConflicts, [account(9, 2, 'gitlab', '42')], [{ id: 1, provider: 'github', uid: '42' }])).toEqual(['inserted']);
  });
});

describe('social tokens', () => {
  const token = (id: number, accountId: number, appId: number | null): SocialToken => ({ id, accountId, appId, sealedToken: 'sealed', sealedTokenSecret: '', expiresAt: null });

  it('skips a second token of an account for the same app', () => {
    expect(settle(socialTokenConflicts, [token(9, 1, 3)], [{ id: 4, accountId: 1, appId: 3 }])).toEqual([{ skipped: 'the social account has a token for this app in Latchkey already (id 4)' }]);
  });

  it("imports an account's tokens for two apps, and one without an app", () => {
    expect(settle(socialTokenConflicts, [token(9, 1, 3), token(10, 1, null)], [{ id: 4, accountId: 1, appId: 5 }])).toEqual(['inserted', 'inserted']);
  });
});
