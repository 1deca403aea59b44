/**
 * Shared pieces of the storage conformance suite: a fresh database per test, user fixtures for
 * either username type, and an assertion that a refusal is a LatchkeyError and not a driver error.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import { LatchkeyError, type LatchkeyErrorCode } from '../../core/errors.js';
import { createTestDatabase, type TestDatabase, type TestDatabaseKind } from '../database.js';
import type { NewUser, User } from '../../account/model.js';
import type { Store } from '../../store.js';
import type { UsernameType } from '../../config/settings.js';

export interface ConformanceTarget {
  kind: TestDatabaseKind;
  usernameType: UsernameType;
}

export const JOINED = new Date('2030-01-01T10:00:00.123Z');

/** Registers a fresh, migrated database for every test; call it inside a describe. */
export function useFreshDatabase(target: ConformanceTarget): () => TestDatabase {
  let current: TestDatabase | undefined;
  beforeEach(async () => {
    current = await createTestDatabase(target.kind, target.usernameType);
  });
  afterEach(async () => {
    await current?.destroy();
    current = undefined;
  });
  return () => {
    if (current === undefined) throw new Error('the test database is only available inside a test');
    return current;
  };
}

/** A valid NewUser for the target's username type; `login` becomes the username or the email's local part. */
export function newUser(usernameType: UsernameType, login: string, overrides: Partial<NewUser> = {}): NewUser {
  return {
    ...(usernameType === 'username' ? { username: login } : {}),
    email: `${login}@example.com`,
    password: 'argon2$argon2id$v=19$m=102400,t=2,p=8$c2FsdA$aGFzaA',
    dateJoined: JOINED,
    ...overrides,
  };
}

export async function createUser(store: Store, usernameType: UsernameType, login: string, overrides: Partial<NewUser> = {}): Promise<User> {
  return store.users.create(newUser(usernameType, login, overrides));
}

/** Driver errors name tables, indexes and SQL; none of that may reach a caller. */
export function expectNoDriverDetails(error: LatchkeyError): void {
  expect(error.message).not.toMatch(/latchkey_|constraint|UNIQUE|SQLITE|duplicate key|violates/i);
}

export async function expectLatchkeyError(work: Promise<unknown>, code: LatchkeyErrorCode): Promise<LatchkeyError> {
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, `expected LatchkeyError '${code}'`).toBeInstanceOf(LatchkeyError);
  expect((error as LatchkeyError).code).toBe(code);
  expectNoDriverDetails(error as LatchkeyError);
  return error as LatchkeyError;
}

/** Settles every promise and sorts the outcomes: values, and the codes of LatchkeyErrors (others fail). */
export async function settleAll<T>(work: Array<Promise<T>>): Promise<{ values: T[]; codes: LatchkeyErrorCode[] }> {
  const results = await Promise.allSettled(work);
  const values: T[] = [];
  const codes: LatchkeyErrorCode[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') {
      values.push(result.value);
    } else {
      expect(result.reason, 'every refusal must be a LatchkeyError').toBeInstanceOf(LatchkeyError);
      codes.push((result.reason as LatchkeyError).code);
    }
  }
  return { values, codes };
}
