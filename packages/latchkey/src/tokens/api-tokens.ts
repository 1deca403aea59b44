import { randomBytes } from 'node:crypto';
import type { ClientInfo } from '../core/client.js';
import { constantTimeEqual, keyedHash } from '../core/crypto.js';
import { decryptSecret, encryptSecret } from '../core/encryption.js';
import type { LatchkeyDeps } from '../deps.js';
import type { ApiToken } from './model.js';
import type { User } from '../account/model.js';

/**
 * API tokens, as Django REST framework's authtoken: one per user, valid until deleted, sent as
 * `Authorization: Token <key>`. A key is 20 bytes from the CSPRNG shown as 40 lowercase hex
 * characters: DRF's format (so clients that check it keep working) and 160 random bits, far past
 * guessing.
 *
 * The key is never stored. A keyed hash (HMAC under a key derived from LATCHKEY_SECRET_KEY) finds
 * the token; a plain hash would do as well against guessing, but the keyed one means a database
 * dump cannot even be used to confirm a key seen elsewhere. Because DRF answers every login with
 * the same key until the token is deleted, the key must be recoverable: a copy encrypted under the
 * secret key (AES-GCM, core/encryption.ts), bound to the user's id so that a copy moved to another
 * user's row does not decrypt. A dump without the secret key yields no usable token.
 */

const PURPOSE = 'api-token';
const KEY_BYTES = 20;
const KEY_FORMAT = /^[0-9a-f]{40}$/;

type TokenDeps = Pick<LatchkeyDeps, 'settings' | 'store' | 'clock' | 'events'>;

/**
 * Who acts when a token is made or deleted without a request (the management CLI), for the audit
 * trail's ip and user agent columns.
 */
export const NO_CLIENT: ClientInfo = { ip: '', userAgent: '' };

/** Whether `key` has the form of a key (40 lowercase hex characters); says nothing of whether it is one. */
export function isApiTokenKeyFormat(key: unknown): key is string {
  return typeof key === 'string' && KEY_FORMAT.test(key);
}

function keyHashOf(deps: Pick<LatchkeyDeps, 'settings'>, key: string): string {
  return keyedHash(deps.settings.SECRET_KEY, PURPOSE, key);
}

/** The associated data that binds a sealed key to its user's row. */
function sealedFor(userId: number): string {
  return `latchkey:api-token:user:${userId}`;
}

function newToken(deps: Pick<LatchkeyDeps, 'settings' | 'clock'>, userId: number): { key: string; token: ApiToken } {
  const key = randomBytes(KEY_BYTES).toString('hex');
  return { key, token: storedApiToken(deps, userId, key, deps.clock.now()) };
}

/**
 * A token as it is stored, for a key in the key format (isApiTokenKeyFormat): its keyed hash and
 * its sealed copy. New keys come from newToken; a key made elsewhere (Django REST framework's, by
 * `manage import-django`) is stored the same way, so it keeps working as it did.
 */
export function storedApiToken(deps: Pick<LatchkeyDeps, 'settings'>, userId: number, key: string, createdAt: Date): ApiToken {
  return {
    userId,
    keyHash: keyHashOf(deps, key),
    sealedKey: encryptSecret(deps.settings.SECRET_KEY, PURPOSE, Buffer.from(key, 'hex'), sealedFor(userId)),
    createdAt,
  };
}

/**
 * The key a stored token holds, or undefined when it cannot be read back: sealed under a secret
 * key that has since changed, moved from another user's row, or not the key its hash finds (a row
 * altered by hand). Such a token could never be handed out again.
 */
function keyOf(deps: Pick<LatchkeyDeps, 'settings'>, token: ApiToken): string | undefined {
  const bytes = decryptSecret(deps.settings.SECRET_KEY, PURPOSE, token.sealedKey, sealedFor(token.userId));
  if (bytes?.length !== KEY_BYTES) return undefined;
  const key = Buffer.from(bytes).toString('hex');
  return constantTimeEqual(keyHashOf(deps, key), token.keyHash) ? key : undefined;
}

/**
 * The key of the token the user has after a creation: ours when our insert won, or that of a
 * parallel request that stored its token first (both callers then get the same key, as with DRF's
 * get_or_create).
 */
async function keyAfterCreation(deps: TokenDeps, user: User, ours: { key: string; token: ApiToken }, stored: ApiToken, client: ClientInfo, data: Record<string, unknown>): Promise<string> {
  if (stored.keyHash === ours.token.keyHash) {
    await deps.events.emit('api_token_created', user.id, client, data);
    return ours.key;
  }
  const theirs = keyOf(deps, stored);
  // Only instances that disagree on LATCHKEY_SECRET_KEY get here: a deployment error, not a user's.
  if (theirs === undefined) throw new Error(`The API token of user ${user.id} was just made by an instance with another LATCHKEY_SECRET_KEY.`);
  return theirs;
}

/**
 * The user's key, creating their token when they have none: the same key on every call until
 * the token is deleted. Works for an inactive user too (as DRF's management command does); the
 * token is refused for as long as the account is inactive.
 */
export async function issueApiToken(deps: TokenDeps, user: User, client: ClientInfo = NO_CLIENT): Promise<string> {
  const existing = await deps.store.apiTokens.findForUser(user.id);
  if (existing !== undefined) {
    const key = keyOf(deps, existing);
    if (key !== undefined) return key;
    return replaceUnreadableToken(deps, user, existing, client);
  }
  const ours = newToken(deps, user.id);
  const stored = await deps.store.apiTokens.createIfAbsent(ours.token);
  return keyAfterCreation(deps, user, ours, stored, client, {});
}

/**
 * A token whose key cannot be read back any more (most often: LATCHKEY_SECRET_KEY was changed,
 * which also makes its hash unfindable, so the old key is already refused everywhere) is replaced
 * by a new one rather than failing every login of its user for good. The client that held the old
 * key logs in again and gets the new one.
 *
 * Delete and create are one transaction, so the user never has no token or two. Parallel logins
 * must also end with one key between them, not one each with all but the last already deleted:
 * so the transaction first asks createIfAbsent for the user's token, which inside a transaction
 * also holds it (a row lock on PostgreSQL; SQLite has one writer at a time). Only if it is still
 * the unreadable one is it replaced; a replacement that a parallel login made first (it waited
 * for that one to commit) is handed out instead, and a token deleted meanwhile simply gives way
 * to ours.
 */
async function replaceUnreadableToken(deps: TokenDeps, user: User, unreadable: ApiToken, client: ClientInfo): Promise<string> {
  const ours = newToken(deps, user.id);
  const stored = await deps.store.transaction(async (repositories) => {
    const current = await repositories.apiTokens.createIfAbsent(ours.token);
    if (current.keyHash !== unreadable.keyHash) return current;
    await repositories.apiTokens.deleteForUser(user.id);
    return repositories.apiTokens.createIfAbsent(ours.token);
  });
  return keyAfterCreation(deps, user, ours, stored, client, { replaced: 'unreadable' });
}

/**
 * The active user whose key this is, or undefined for anything else: malformed, unknown, deleted,
 * or the user's account inactive. Every call asks the database, with no cache in between, so that
 * a deletion or a deactivation takes effect at once on every instance that shares the database
 * (a cache would keep a revoked key working on the instances that had cached it).
 *
 * The lookup by keyed hash needs no constant-time comparison: how long the index search takes
 * depends on the HMAC of the key, which someone guessing cannot steer toward a stored hash.
 */
export async function userForApiToken(deps: Pick<LatchkeyDeps, 'settings' | 'store'>, key: string): Promise<User | undefined> {
  // Refused before any query: a malformed key (wrong length, upper case, non-ASCII, 10 KB) costs nothing.
  if (!isApiTokenKeyFormat(key)) return undefined;
  const user = await deps.store.apiTokens.findUserByKeyHash(keyHashOf(deps, key));
  return user?.isActive === true ? user : undefined;
}

/** Deletes the user's token: every copy of the key stops working at once. Returns whether there was one. */
export async function deleteApiToken(deps: Pick<LatchkeyDeps, 'store' | 'events'>, user: User, client: ClientInfo = NO_CLIENT): Promise<boolean> {
  const deleted = await deps.store.apiTokens.deleteForUser(user.id);
  if (deleted) await deps.events.emit('api_token_deleted', user.id, client);
  return deleted;
}
