import type { LatchkeyDeps } from '../deps.js';
import type { NewUserFields, SignupSubmission } from './adapter.js';
import { cleanName } from './names.js';

/** What a signup stores of AccountAdapter.saveUser's answer: the name, cleaned, and the project's data as JSON holds it. */
export interface SavedUser {
  name: string;
  /** Absent when the project kept nothing (an empty object counts as nothing). */
  extra?: Record<string, unknown>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Asks the project's saveUser (allauth's save_user) what a new account is saved with, every
 * signup's way: a refusal it throws (a LatchkeyError) goes to the person as any field's does. Its
 * answer is held to the contract before anything is written: a name the profile form would
 * refuse is refused the same way (on the `name` field), and `extra` must be a plain object JSON
 * can hold, kept as JSON gives it back (a Date becomes its ISO text), so that what the audit
 * record stores is what the project's subscriber reads. An answer outside the contract is the
 * project's mistake, said in an Error that names the hook.
 */
export async function savedUserOf(deps: Pick<LatchkeyDeps, 'adapter'>, user: NewUserFields, signup: SignupSubmission): Promise<SavedUser> {
  const saved: unknown = await deps.adapter.saveUser(user, signup);
  if (!isPlainObject(saved) || typeof saved.name !== 'string') {
    throw new TypeError('AccountAdapter.saveUser must return { name, extra? }: start from `await super.saveUser(user, signup)`.');
  }
  const name = cleanName(saved.name);
  if (saved.extra === undefined) return { name };
  if (!isPlainObject(saved.extra)) throw new TypeError('AccountAdapter.saveUser: `extra` must be a plain object.');
  let extra: Record<string, unknown>;
  try {
    extra = JSON.parse(JSON.stringify(saved.extra)) as Record<string, unknown>;
  } catch (error) {
    throw new TypeError(`AccountAdapter.saveUser: \`extra\` must be data JSON can hold (${error instanceof Error ? error.message : String(error)}).`);
  }
  return Object.keys(extra).length === 0 ? { name } : { name, extra };
}

/** The `user_signed_up` record's data: Latchkey's, then the project's under `extra`. */
export function signedUpData(data: Record<string, unknown>, saved: SavedUser): Record<string, unknown> {
  return saved.extra === undefined ? data : { ...data, extra: saved.extra };
}
