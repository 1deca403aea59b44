/**
 * The account changes a `kill -9` must never leave half-made (issue 19, faults; security tests
 * 43-44), for storage/flow-crash.test.ts and its child process (flow-crash.child.ts). Each scenario
 * sets up an account in the child, runs one real flow there until the child is killed at a chosen
 * point, and, after the database is reopened, tells from its rows alone whether the change is
 * absent ('before'), complete ('after') or something in between (described, so a failure says what).
 */
import type { User } from '../account/model.js';
import { addEmailAddress, makePrimaryEmailAddress } from '../account/flows/manage-email.js';
import { signup } from '../account/flows/signup.js';
import { changePassword } from '../account/flows/password-change.js';
import { createUser } from '../account/users.js';
import { changeUserByAdmin } from '../admin/flows/manage-users.js';
import type { Settings } from '../config/settings.js';
import type { ClientInfo } from '../core/client.js';
import type { LatchkeyDeps } from '../deps.js';
import { activateTotp, totpSetup } from '../mfa/flows/totp.js';
import { issueApiToken, userForApiToken } from '../tokens/api-tokens.js';
import { testSettings } from './latchkey.js';
import { totpCodeAt } from './mfa.js';

const CLIENT: ClientInfo = { ip: '127.0.0.1', userAgent: 'crash test' };
const OLD_PASSWORD = 'the old long passphrase';
const NEW_PASSWORD = 'the new long passphrase';

/** What the rows say about the change: not made, made in full, or (a failure) what is between. */
export type ChangeState = 'before' | 'after' | `between: ${string}`;

/** What reading the rows after the restart takes: the reopened database's store, and the means to check a password or a token. */
export type ObserveDeps = Pick<LatchkeyDeps, 'settings' | 'store' | 'passwords' | 'clock' | 'events'>;

export interface CrashScenario {
  /** Writes the account the change is made to (committed before the change begins); returns the change. */
  setUp(deps: LatchkeyDeps): Promise<() => Promise<unknown>>;
  /** Reads the rows after the restart. */
  observe(deps: ObserveDeps): Promise<ChangeState>;
}

/** The settings of both processes: the same secret key, so the parent can read what the child sealed. */
export function crashSettings(): Settings {
  return testSettings({ usernameType: 'username', env: { LATCHKEY_SECRET_KEY: 'flow-crash-test-secret-key-not-for-production-use-0123456789' } });
}

function createAda(deps: LatchkeyDeps): Promise<User> {
  return createUser(deps, { username: 'ada', email: 'ada@example.com', password: OLD_PASSWORD, emailVerified: true });
}

async function findUser(deps: Pick<LatchkeyDeps, 'store'>, username: string): Promise<User> {
  const user = await deps.store.users.findByUsername(username);
  if (user === undefined) throw new Error(`${username} is gone: the setup was committed before the change`);
  return user;
}

type Fact = 'before' | 'after' | `neither: ${string}`;

/** Where one fact of the rows stands; `what` describes it when it is neither. */
function fact(isBefore: boolean, isAfter: boolean, what: string): Fact {
  if (isBefore && !isAfter) return 'before';
  if (isAfter && !isBefore) return 'after';
  return `neither: ${what}`;
}

/** 'before' or 'after' when every fact agrees with it, else what each fact says. */
function judge(facts: Record<string, Fact>): ChangeState {
  const states = new Set(Object.values(facts));
  if (states.size === 1 && (states.has('before') || states.has('after'))) return [...states][0] as 'before' | 'after';
  return `between: ${JSON.stringify(facts)}`;
}

/** The address the signup scenario signs up with. */
export const SIGNUP_EMAIL = 'eve@example.com';

export const CRASH_SCENARIOS = {
  /**
   * A new account: nothing, or the user with its address, its records and its confirmation mail
   * waiting in the outbox (the restarted site sends it: storage/flow-crash.test.ts follows it).
   */
  signup: {
    setUp(deps) {
      return Promise.resolve(() => signup(deps, { email: SIGNUP_EMAIL, username: 'eve', password1: NEW_PASSWORD, password2: NEW_PASSWORD, client: CLIENT }));
    },
    async observe(deps) {
      const user = await deps.store.users.findByUsername('eve');
      const addresses = user ? (await deps.store.emailAddresses.listForUser(user.id)).map((address) => address.email) : [];
      const records = user ? (await deps.store.auditLog.listForUser(user.id)).map((record) => record.event).sort() : [];
      const mails = (await deps.store.mailOutbox.list()).filter((mail) => mail.recipients.includes(SIGNUP_EMAIL));
      return judge({
        user: fact(user === undefined, user !== undefined, 'the user'),
        address: fact(addresses.length === 0, addresses.join() === SIGNUP_EMAIL, `addresses ${addresses.join(', ')}`),
        records: fact(records.length === 0, records.join() === 'email_confirmation_sent,user_signed_up', `records ${records.join(', ')}`),
        mail: fact(mails.length === 0, mails.length === 1, `${mails.length} queued mails`),
      });
    },
  },


  /** The hash and the sessions: old password with every session, or new with only the changer's. */
  'password change': {
    async setUp(deps) {
      const user = await createAda(deps);
      const current = await deps.sessions.create({ userId: user.id });
      await deps.sessions.create({ userId: user.id });
      return () => changePassword(deps, { user, oldPassword: OLD_PASSWORD, password1: NEW_PASSWORD, password2: NEW_PASSWORD, client: CLIENT, currentSession: current });
    },
    async observe(deps) {
      const user = await findUser(deps, 'ada');
      const [old, fresh] = await Promise.all([deps.passwords.verify(OLD_PASSWORD, user.password), deps.passwords.verify(NEW_PASSWORD, user.password)]);
      const sessions = await deps.store.sessions.listForUser(user.id);
      return judge({
        password: fact(old.valid, fresh.valid, 'the password'),
        sessions: fact(sessions.length === 2, sessions.length === 1, `${sessions.length} sessions`),
      });
    },
  },

  /** The address list: the new address is listed, unverified and not primary, or not at all. */
  'email add': {
    async setUp(deps) {
      const user = await createAda(deps);
      return () => addEmailAddress(deps, { user, email: 'second@example.com', client: CLIENT, lastAuthenticatedAt: deps.clock.now() });
    },
    async observe(deps) {
      const user = await findUser(deps, 'ada');
      const listed = (await deps.store.emailAddresses.listForUser(user.id)).map((address) => `${address.email}${address.primary ? ' primary' : ''}${address.verified ? ' verified' : ''}`);
      const addresses = listed.sort().join(', ');
      return judge({ addresses: fact(addresses === 'ada@example.com primary verified', addresses === 'ada@example.com primary verified, second@example.com', addresses) });
    },
  },

  /** Exactly one primary address, and the user's own email field names it. */
  'email make primary': {
    async setUp(deps) {
      const user = await createAda(deps);
      await deps.store.emailAddresses.add({ userId: user.id, email: 'second@example.com', verified: true, primary: false });
      return () => makePrimaryEmailAddress(deps, { user, email: 'second@example.com', client: CLIENT, lastAuthenticatedAt: deps.clock.now() });
    },
    async observe(deps) {
      const user = await findUser(deps, 'ada');
      const primaries = (await deps.store.emailAddresses.listForUser(user.id)).filter((address) => address.primary).map((address) => address.email);
      return judge({
        primary: fact(primaries.join() === 'ada@example.com', primaries.join() === 'second@example.com', `primary addresses ${primaries.join(', ')}`),
        userEmail: fact(user.email === 'ada@example.com', user.email === 'second@example.com', `the user's email ${user.email}`),
      });
    },
  },

  /** The authenticator app with its recovery codes, or neither. */
  'TOTP activation': {
    async setUp(deps) {
      const user = await createAda(deps);
      const setup = await totpSetup(deps, user);
      const now = deps.clock.now();
      return () => activateTotp(deps, { user, client: CLIENT, lastAuthenticatedAt: now, pending: setup.pending, code: totpCodeAt(deps, setup.secret, now) });
    },
    async observe(deps) {
      const user = await findUser(deps, 'ada');
      const types = (await deps.store.authenticators.listForUser(user.id)).map((authenticator) => authenticator.type).sort();
      return judge({ authenticators: fact(types.length === 0, types.join() === 'recovery_codes,totp', `authenticators ${types.join(', ')}`) });
    },
  },

  /** No token, or one whose key can be handed out again and signs its user in. */
  'token creation': {
    async setUp(deps) {
      const user = await createAda(deps);
      return () => issueApiToken(deps, user, CLIENT);
    },
    async observe(deps) {
      const user = await findUser(deps, 'ada');
      const stored = await deps.store.apiTokens.findForUser(user.id);
      if (stored === undefined) return 'before';
      // A whole token is handed out as it is; one that cannot be read back would be replaced.
      const key = await issueApiToken(deps, user, CLIENT);
      const after = await deps.store.apiTokens.findForUser(user.id);
      const signsIn = (await userForApiToken(deps, key))?.id === user.id;
      return after?.keyHash === stored.keyHash && signsIn ? 'after' : `between: a token row that cannot be used (${JSON.stringify({ replaced: after?.keyHash !== stored.keyHash, signsIn })})`;
    },
  },

  /** A staff member deactivates and renames a user: the change and its audit record, or neither. */
  'admin user change': {
    async setUp(deps) {
      const root = await createUser(deps, { username: 'root', email: 'root@example.com', password: OLD_PASSWORD, emailVerified: true });
      await deps.store.users.update(root.id, { isStaff: true, isSuperuser: true });
      const bob = await createUser(deps, { username: 'bob', email: 'bob@example.com', password: OLD_PASSWORD, emailVerified: true });
      await deps.sessions.create({ userId: bob.id });
      await issueApiToken(deps, bob, CLIENT);
      const actor = await findUser(deps, 'root');
      const changes = { name: 'Bob Gone', email: 'bob@example.com', isActive: false, isStaff: false, isSuperuser: false };
      return () => changeUserByAdmin(deps, actor, bob, changes, CLIENT, deps.clock.now());
    },
    async observe(deps) {
      const bob = await findUser(deps, 'bob');
      const root = await findUser(deps, 'root');
      const sessions = await deps.store.sessions.listForUser(bob.id);
      const token = await deps.store.apiTokens.findForUser(bob.id);
      const audit = (await deps.store.auditLog.listForUser(root.id, 100)).filter((record) => record.event === 'admin_user_changed' && record.data.target === bob.id);
      return judge({
        active: fact(bob.isActive, !bob.isActive, 'the active flag'),
        name: fact(bob.name === '', bob.name === 'Bob Gone', `the name '${bob.name}'`),
        sessions: fact(sessions.length === 1, sessions.length === 0, `${sessions.length} sessions`),
        token: fact(token !== undefined, token === undefined, 'the API token'),
        audit: fact(audit.length === 0, audit.length === 1, `${audit.length} audit records`),
      });
    },
  },
} satisfies Record<string, CrashScenario>;

export type CrashScenarioName = keyof typeof CRASH_SCENARIOS;
