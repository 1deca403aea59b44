import { FieldChecks, isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import type { LatchkeyDeps } from '../../deps.js';
import { beginLogin, type LoginResult } from '../../login/pipeline.js';
import { PASSWORD, type FirstFactor } from '../../login/proofs.js';
import type { EmailMessage } from '../../mail/ports.js';
import type { Repositories } from '../../store.js';
import type { User } from '../model.js';
import { commitChange, deliverMail, type QueuedMail } from '../changes.js';
import { mailLanguage, renderAccountEmail } from '../emails.js';
import { savedUserOf, signedUpData, type SavedUser } from '../save-user.js';
import { queueEmailConfirmation, unmailedVerificationCode } from '../email-confirmation.js';
import type { MailedCodeState } from '../mailed-codes.js';
import type { ClientInfo } from '../../core/client.js';
import { validateEmail, validateUsername } from '../../core/identifiers.js';
import { asksSignupField, signupUserFields } from '../../config/signup-fields.js';
import { cleanAskedUserFields } from '../user-field-values.js';
import type { UserFieldValue } from '../../core/user-fields.js';
import { cleanName } from '../names.js';
import { randomAlphanumeric } from '../../core/random.js';
import { accountUrl, signInUrl } from '../urls.js';
import { validatePasswordStrength, createUser, emailInUse, passwordTheAdapterAccepts } from '../users.js';
import { msg } from '../../core/i18n/message.js';

export const SIGNUP_CLOSED = msg('We are sorry, but the sign up is currently closed.');
export const EMAIL_TAKEN = msg('A user is already registered with this email address.');
export const USERNAME_TAKEN = msg('A user with that username already exists.');
export const PASSWORDS_DIFFER = msg('You must type the same password each time.');
export const EMAILS_DIFFER = msg('You must type the same email each time.');
const REQUIRED = msg('This field is required.');

/** What every signup gives, whatever will prove the person later: the address and the username. */
export interface SignupIdentityInput {
  email: string;
  /** Read only when the project signs in by username (USERNAME_TYPE=username). */
  username: string;
  /** The address again, read only when ACCOUNT_SIGNUP_FIELDS lists email2. */
  email2?: string;
  /** The display name, read only when ACCOUNT_SIGNUP_FIELDS lists name. */
  name?: string;
  /** The project's own fields as sent (a form's text, a JSON body's values), read where ACCOUNT_SIGNUP_FIELDS lists them. */
  userFields?: Readonly<Record<string, unknown>>;
  client: ClientInfo;
  /** Everything the person sent (the form's fields, the JSON body; no password), for the adapter's saveUser. */
  submitted?: Readonly<Record<string, unknown>>;
}

export interface SignupInput extends SignupIdentityInput {
  password1: string;
  password2: string;
}

export type SignupResult =
  /**
   * Mandatory verification: the person must follow the mailed link before signing in. An address
   * that already has an account gets this result too (its owner is told by email). For a new
   * account `login` is the signup's login, stopped at verify_email as a password login would be,
   * for the adapter to keep in the client's session (so that confirming there can carry it on);
   * for an existing one there is none. The adapter must present both alike: the result says
   * whether an account was created only so that it can keep the right state. Under verification by
   * code, an existing account's result carries `code`, a code state no mail carries, for the
   * adapter to keep as it keeps a new account's (in its stopped login): then the code form and
   * its wrong answers look the same for both.
   */
  | { status: 'verification_sent'; email: string; mailFailed: boolean; login?: LoginResult; code?: MailedCodeState }
  /**
   * Optional or no verification: the new account is signed in at once, through the login stages
   * like any login (`login`: what they gave, for the adapter to settle).
   */
  | { status: 'signed_up'; user: User; verificationSent: boolean; mailFailed: boolean; login: LoginResult; verificationCode?: MailedCodeState };

interface SignupIdentity {
  username: string | undefined;
  email: string;
  /** The display name the person gave ('' when the signup does not ask it), before saveUser. */
  name: string;
  /** The project's fields the signup asks, clean (docs/user-fields.md). */
  own: Record<string, UserFieldValue>;
}

/** The new account's identity with the name saveUser gave it: what its password is compared with. */
type PasswordContext = SignupIdentity;

interface CleanSignup extends SignupIdentity {
  /** Null for a signup without a password: the account gets an unusable one. */
  password: string | null;
  /** The adapter's saveUser's answer. */
  saved: SavedUser;
}

/**
 * Signup: the adapter decides whether it is open, the signup rate limit (per IP) counts the
 * attempt before any work, then every field is validated before anything is looked up, so that a
 * refusal of a bad password reads the same whether or not the address has an account.
 */
export async function signup(deps: LatchkeyDeps, input: SignupInput): Promise<SignupResult> {
  return registerAccount(deps, input, PASSWORD, (identity) => cleanPassword(deps, input, identity));
}

/**
 * A signup without a password: the first step of a passkey signup (passkey-signup.ts). Every rule
 * of signup() holds (open or closed, the rate limit, the adapter's cleaning hooks, the same answer
 * and a mail to the owner for an address that has an account); the account gets an unusable
 * password, and its login begins with `firstFactor`, whose own stage asks for the passkey.
 */
export async function signupWithoutPassword(deps: LatchkeyDeps, input: SignupIdentityInput, firstFactor: FirstFactor): Promise<SignupResult> {
  return registerAccount(deps, input, firstFactor, () => null);
}

async function registerAccount(
  deps: LatchkeyDeps,
  input: SignupIdentityInput,
  firstFactor: FirstFactor,
  /** The password's check, once the address, username and name are known; null for none. */
  passwordOf: (identity: PasswordContext) => string | null | Promise<string | null>,
): Promise<SignupResult> {
  if (!(await deps.adapter.isOpenForSignup())) throw new LatchkeyError('signup_closed', SIGNUP_CLOSED);
  await deps.rateLimits.enforce('signup', { ip: input.client.ip });
  // Every field is judged, and every refusal given at once, as a Django form's errors.
  const checks = new FieldChecks();
  const identity = await cleanIdentity(deps, input, checks);
  // Asked before the address is looked up, so that its refusal reads the same whether or not the
  // address has an account; and before the password's check, which compares it with the name.
  // saveUser reads a clean identity only: what it is handed is what would be stored.
  const newUser = { ...identity.own, ...(identity.username === undefined ? {} : { username: identity.username }), email: identity.email, name: identity.name };
  const saved = checks.clean ? await checks.check(() => savedUserOf(deps, newUser, { method: firstFactor.kind === 'passkey_signup' ? 'passkey' : 'password', fields: input.submitted ?? {} })) : undefined;
  // The password is judged even beside other refusals, against what is known of the account.
  const password = await checks.check(() => passwordOf({ ...identity, name: saved?.name ?? identity.name }));
  checks.finish();
  if (saved === undefined || password === undefined) throw new Error('A signup passed its checks without a saved user or a password.');
  return createAccount(deps, { ...identity, password, saved }, input.client, firstFactor);
}

/** The identity fields, each judged on its own; a refused one is left empty (checks holds why). */
async function cleanIdentity(deps: LatchkeyDeps, input: SignupIdentityInput, checks: FieldChecks): Promise<SignupIdentity> {
  const asked = deps.settings.ACCOUNT_SIGNUP_FIELDS;
  const email =
    (await checks.check(async () => {
      if (input.email.trim() === '') throw new LatchkeyError('invalid_email', REQUIRED, { param: 'email', reason: 'required' });
      // The adapter sees the normalized address, and what it returns is normalized again, so that no
      // hook can store a spelling the uniqueness checks would not recognise.
      return validateEmail(await deps.adapter.cleanEmail(validateEmail(input.email)));
    })) ?? '';
  if (asksSignupField(asked, 'email2')) {
    await checks.check(() => {
      const again = input.email2?.trim() ?? '';
      if (again === '') throw new LatchkeyError('invalid_email', REQUIRED, { param: 'email2', reason: 'required' });
      if (again.toLowerCase() !== input.email.trim().toLowerCase()) throw new LatchkeyError('invalid_email', EMAILS_DIFFER, { param: 'email2', reason: 'email_mismatch' });
    });
  }
  const username =
    deps.settings.USERNAME_TYPE === 'username' ? await checks.check(async () => validateUsername(await deps.adapter.cleanUsername(validateUsername(input.username)))) : undefined;
  const name = asksSignupField(asked, 'name')
    ? ((await checks.check(() => {
        const given = cleanName(input.name ?? '');
        if (given === '' && asked.includes('name*')) throw new LatchkeyError('invalid_input', REQUIRED, { param: 'name', reason: 'required' });
        return given;
      })) ?? '')
    : '';
  const own = await cleanAskedUserFields(signupUserFields(asked, deps.userFields), input.userFields ?? {}, checks);
  return { username, email, name, own };
}

async function cleanPassword(deps: LatchkeyDeps, input: SignupInput, { username, email, name }: PasswordContext): Promise<string> {
  // Both fields judged, as Django's form does: a weak password and a different confirmation are two refusals.
  const checks = new FieldChecks();
  await checks.check(() => {
    if (input.password1 === '') throw new LatchkeyError('password_invalid', REQUIRED, { param: 'password1', reason: 'required' });
    // The length validator runs first and returns at once, so an oversized password costs no more
    // than this comparison and is never hashed.
    validatePasswordStrength(deps.settings, input.password1, { username: username ?? null, email, name }, 'password1');
  });
  // Asked only where the signup asks it twice (ACCOUNT_SIGNUP_FIELDS' password2).
  if (asksSignupField(deps.settings.ACCOUNT_SIGNUP_FIELDS, 'password2')) {
    await checks.check(() => {
      if (input.password2 === '') throw new LatchkeyError('password_invalid', REQUIRED, { param: 'password2', reason: 'required' });
      if (input.password1 !== '' && input.password2 !== input.password1) throw new LatchkeyError('password_invalid', PASSWORDS_DIFFER, { param: 'password2', reason: 'password_mismatch' });
    });
  }
  checks.finish();
  return passwordTheAdapterAccepts(deps, input.password1, { username: username ?? null, email }, 'password1');
}

async function createAccount(deps: LatchkeyDeps, clean: CleanSignup, client: ClientInfo, firstFactor: FirstFactor): Promise<SignupResult> {
  // The username first: its refusal is a plain field error either way, and checking it before the
  // address means a taken username cannot be used to learn whether an address has an account.
  if (clean.username !== undefined && (await deps.store.users.findByUsername(clean.username))) {
    throw new LatchkeyError('username_taken', USERNAME_TAKEN, { param: 'username' });
  }
  if (await emailInUse(deps, clean.email)) return accountAlreadyExists(deps, clean, client);
  const verification = deps.settings.ACCOUNT_EMAIL_VERIFICATION;
  // The confirm_email limit (sendEmailConfirmation's) is counted before the account is made, so
  // that the confirmation can be queued in the account's own transaction.
  const mayMail = verification !== 'none' && (await deps.rateLimits.consume('confirm_email', { ip: client.ip, key: clean.email })).allowed;
  // Filled in by the transaction's work: the queued mail, and its code's state under verification by code.
  const queued: { confirmation?: { mail: QueuedMail; code?: MailedCodeState } } = {};
  let user: User;
  try {
    // The account, its address, its user_signed_up record and its confirmation mail are one
    // transaction: a crash leaves all of them or none, and the outbox sends the mail after it.
    user = await createUser(
      deps,
      { ...clean.own, ...(clean.username === undefined ? {} : { username: clean.username }), email: clean.email, name: clean.saved.name, password: clean.password, emailVerified: false },
      async (change, created) => {
        await refuseIfSignedUpMeanwhile(change.repositories, clean.email, created.id);
        await change.record('user_signed_up', created.id, client, signedUpData({ email: clean.email }, clean.saved));
        const address = mayMail ? await change.repositories.emailAddresses.findForUser(created.id, clean.email) : undefined;
        if (address) queued.confirmation = await queueEmailConfirmation(deps, change, created, address, client);
      },
    );
  } catch (error) {
    if (mayMail) await refundMailAttempt(deps, clean.email, client);
    // Another instance won the race for the address; the database's unique index decided.
    if (isLatchkeyError(error, 'email_taken')) return accountAlreadyExists(deps, clean, client);
    throw error;
  }

  let mailFailed = false;
  let verificationSent = false;
  // Under verification by code, the code the mail carried: the signup's client keeps it.
  let verificationCode: MailedCodeState | undefined;
  const { confirmation } = queued;
  if (confirmation !== undefined) {
    if ((await deliverMail(deps, confirmation.mail)).status === 'failed') {
      // The account stays, and so does its mail: the outbox tries it again. The person is told
      // (the adapter says how) and may ask for another: a login under mandatory verification
      // resends it; the email page has a button.
      await refundMailAttempt(deps, clean.email, client);
      mailFailed = true;
    } else {
      verificationSent = true;
      verificationCode = confirmation.code;
    }
  }
  // What the person has just given (the password they chose, or for a passkey signup the address
  // alone) is the login's first factor. Under mandatory verification the login stops at
  // verify_email, like a password login of the same account; the link has just been mailed above,
  // so the stage does not mail it again.
  if (verification === 'mandatory') {
    const waiting = await beginLogin(deps, user, firstFactor, { client, confirmationJustSent: true, sentVerificationCode: verificationCode });
    return { status: 'verification_sent', email: clean.email, mailFailed, login: waiting };
  }
  const login = await beginLogin(deps, user, firstFactor, { client });
  return { status: 'signed_up', user, verificationSent, mailFailed, login, ...(verificationCode === undefined ? {} : { verificationCode }) };
}

/**
 * An address that already has an account. Without mandatory verification the form says so: the
 * new account would be signed in at once, so hiding it is impossible (allauth says the same).
 * With mandatory verification the response is the one a new signup gets, and the address's owner
 * is told by email instead. A password is still hashed and thrown away so that the time taken
 * does not tell the two apart either (a signup without one hashes nothing either way).
 */
async function accountAlreadyExists(deps: LatchkeyDeps, clean: CleanSignup, client: ClientInfo): Promise<SignupResult> {
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION !== 'mandatory') throw new LatchkeyError('email_taken', EMAIL_TAKEN, { param: 'email' });
  if (clean.password !== null) await deps.passwords.hash(clean.password);
  await rehearseNewAccount(deps, clean, client);
  const mailFailed = !(await notifyAddressOwner(deps, clean.email, client, 'signup'));
  if (deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED) return { status: 'verification_sent', email: clean.email, mailFailed, code: unmailedVerificationCode(deps, clean.email) };
  return { status: 'verification_sent', email: clean.email, mailFailed };
}

/** Thrown by the rehearsal's work to roll it back; nothing else throws this object. */
const REHEARSAL_OVER = new Error('signup rehearsal over');

/**
 * The database work of a new account, done for a stand-in account and rolled back: the
 * counterpart of the throwaway hash above. A registered address would otherwise answer a few
 * milliseconds sooner than a new one (no insert, no audit record, no queued mail), and that
 * difference can be measured (`npm run bench -- login-enumeration --only=signup`). Nothing of it
 * survives: the transaction is rolled back, so no row, audit record or mail remains and no
 * subscriber hears of it. On PostgreSQL the rolled-back inserts use up sequence values, which
 * says only that some signup met some registered address.
 */
async function rehearseNewAccount(deps: LatchkeyDeps, clean: CleanSignup, client: ClientInfo): Promise<void> {
  const standIn = randomAlphanumeric(12).toLowerCase();
  const email = `${standIn}@rehearsal.invalid`;
  try {
    await commitChange(deps, async (change) => {
      const { repositories } = change;
      // As createUser does; the password passed these checks already, so this cannot refuse it.
      if (clean.password !== null) validatePasswordStrength(deps.settings, clean.password, { username: clean.username ?? null, email: clean.email, name: clean.saved.name });
      const user = await repositories.users.create({
        ...clean.own,
        ...(clean.username === undefined ? {} : { username: `r${standIn}` }),
        email,
        name: '',
        password: 'x',
        isStaff: false,
        isSuperuser: false,
        dateJoined: deps.clock.now(),
      });
      await repositories.emailAddresses.add({ userId: user.id, email, verified: false, primary: true });
      // The project's rows too (createUser's hook): a slow hook must not tell a new address from a registered one.
      await deps.adapter.onUserCreated(user, repositories.projectDatabase);
      await refuseIfSignedUpMeanwhile(repositories, email, user.id);
      await change.record('user_signed_up', user.id, client, signedUpData({ email }, clean.saved));
      const address = await repositories.emailAddresses.findForUser(user.id, email);
      if (address) await queueEmailConfirmation(deps, change, user, address, client);
      await repositories.emailAddresses.listForUser(user.id);
      throw REHEARSAL_OVER;
    });
  } catch (error) {
    if (error !== REHEARSAL_OVER) throw error;
  }
}

/**
 * Tells the holder of an address that someone tried to sign up with it, or to add it to another
 * account. Limited like a confirmation mail (confirm_email, per address), so that nobody can
 * flood an inbox through the signup form; a held-back notice is not a failure. Returns false only
 * when delivery failed, so the caller shows the same "could not send" message a new signup would.
 */
export async function notifyAddressOwner(deps: LatchkeyDeps, email: string, client: ClientInfo, attempt: 'signup' | 'add'): Promise<boolean> {
  const limit = await deps.rateLimits.consume('confirm_email', { ip: client.ip, key: email });
  if (!limit.allowed) return true;
  // Through the outbox like a new account's confirmation: as sure to arrive, and as much work.
  const queued = await commitChange(deps, (change) => change.queueMail(accountExistsNotice(deps, email, attempt, client)));
  if ((await deliverMail(deps, queued)).status !== 'failed') return true;
  await refundMailAttempt(deps, email, client);
  return false;
}

/** The notice to the holder of an address that someone tried to sign up with it, or to add it elsewhere. */
export function accountExistsNotice(deps: LatchkeyDeps, email: string, attempt: 'signup' | 'add', client: ClientInfo): EmailMessage {
  return renderAccountEmail(deps, {
    template: 'account/email/account_already_exists',
    to: email,
    // The address's holder is not known here (no lookup may tell whether one exists): the
    // language of the request that caused the notice, as a new account's mail would be.
    language: mailLanguage(deps, undefined, client),
    context: { email, attempt, password_reset_url: accountUrl(deps.settings, 'account_reset_password'), login_url: signInUrl(deps.settings) },
  });
}

/**
 * Takes back the confirm_email attempt of a mail that never left (the subject is the one
 * sendEmailConfirmation counts): the person was told to try again, and an outage must not make
 * them wait out the limit for a mail they never got.
 */
export async function refundMailAttempt(deps: LatchkeyDeps, email: string, client: ClientInfo): Promise<void> {
  await deps.rateLimits.refund('confirm_email', { ip: client.ip, key: email });
}

/**
 * One account per address, however many signups for it run at once and on however many
 * instances. The address was free when createAccount looked, but another signup may have taken
 * it since: projects that sign in by email have a unique index that refuses the second account,
 * projects that sign in by username allow a shared address in the schema (an administrator may
 * give two accounts one address). So inside the new account's transaction, once the address is
 * claimed (claimAddress: a signup that took it meanwhile has committed by then), any other
 * holder makes this signup an "already exists" one and the transaction is rolled back.
 */
async function refuseIfSignedUpMeanwhile(repositories: Repositories, email: string, newUserId: number): Promise<void> {
  await repositories.emailAddresses.claimAddress(email);
  const holders = await repositories.emailAddresses.listByEmail(email);
  if (holders.some((address) => address.userId !== newUserId)) throw new LatchkeyError('email_taken', EMAIL_TAKEN, { param: 'email' });
}
