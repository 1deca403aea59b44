/**
 * Creating an account from a provider's answer: automatically when the provider gave a free
 * address that the project's rules accept, or through the social signup form
 * (/accounts/3rdparty/signup/, headless auth/provider/signup) when it did not. Either way the
 * address stored passed AccountAdapter.cleanEmail, as every address a person signs up with or
 * adds does, so a provider is no way around the project's rules (a domain allowlist, say); the new
 * account and its social account are one transaction, and the login pipeline follows (email
 * verification for an address the provider did not vouch for, as SOCIALACCOUNT_EMAIL_VERIFICATION
 * says).
 */
import { deliverMail, type QueuedMail } from '../../account/changes.js';
import { queueEmailConfirmation } from '../../account/email-confirmation.js';
import { SIGNUP_CLOSED, USERNAME_TAKEN } from '../../account/flows/signup.js';
import { savedUserOf, signedUpData, type SavedUser } from '../../account/save-user.js';
import { createUser, emailInUse } from '../../account/users.js';
import { FieldChecks, isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { cleanAskedUserFields } from '../../account/user-field-values.js';
import { signupUserFields } from '../../config/signup-fields.js';
import type { UserFieldValue } from '../../core/user-fields.js';
import { validateEmail, validateUsername } from '../../core/identifiers.js';
import type { LatchkeyDeps } from '../../deps.js';
import { beginLogin } from '../../login/pipeline.js';
import type { FirstFactor } from '../../login/proofs.js';
import { emailVerificationFor, type LoginContext } from '../../login/stages.js';
import type { NewUserFields } from '../../account/adapter.js';
import type { NewSocialUser, SocialLogin } from '../adapter.js';
import type { ConfiguredProvider } from '../directory.js';
import type { ProviderProfile, ProviderTokens } from '../providers/provider.js';
import { storeProviderTokens } from '../tokens.js';
import type { PendingProviderSignup, ProviderLoginResult } from './results.js';
import { msg, type Message } from '../../core/i18n/message.js';

/** How long the social signup form waits for the person. */
export const PROVIDER_SIGNUP_SECONDS = 30 * 60;

export function emailTakenMessage(providerName: string): Message {
  return msg('An account already exists with this email address. Please sign in to that account first, then connect your {provider} account.', { provider: providerName });
}

export function socialLoginOf(providerId: string, profile: ProviderProfile): SocialLogin {
  return { provider: providerId, uid: profile.uid, data: profile.data, extraData: profile.extraData };
}

/** What a login through a provider's answer proves: the account at the provider, and the SAML IdP session it came through when it is one. */
export function providerFirstFactor(providerId: string, profile: ProviderProfile): FirstFactor {
  return { kind: 'socialaccount', provider: providerId, uid: profile.uid, ...(profile.samlSubject === undefined ? {} : { samlSubject: profile.samlSubject }) };
}

/** The address a signup from the provider starts with: its primary one, else its first, else what populateUser gave. */
function providerEmailOf(profile: ProviderProfile, fields: NewSocialUser): string {
  return (profile.emails.find((address) => address.primary) ?? profile.emails[0])?.email ?? fields.email;
}

/**
 * An address judged as the signup form judges a typed one: Latchkey's validation, then the
 * project's AccountAdapter.cleanEmail. The address to store, or the refusal to show the person
 * (any LatchkeyError: cleanEmail's contract is 'invalid_email', but its message is the project's).
 */
async function cleanAddress(deps: Pick<LatchkeyDeps, 'adapter'>, email: string): Promise<{ email: string } | { refusal: LatchkeyError }> {
  try {
    return { email: validateEmail(await deps.adapter.cleanEmail(validateEmail(email))) };
  } catch (error) {
    if (isLatchkeyError(error)) return { refusal: error };
    throw error;
  }
}

/**
 * The username an automatic signup gives a person in a project of usernames: the project's
 * AccountAdapter.populateUsername makes one (by default the provider's suggestion made valid and
 * free), then Latchkey's rules and cleanUsername judge it as a typed one. Undefined when it is
 * invalid, refused, or somebody has it: the person then chooses one on the signup form.
 */
async function automaticUsername(deps: LatchkeyDeps, user: NewUserFields): Promise<string | undefined> {
  const isTaken = async (username: string): Promise<boolean> => (await deps.store.users.findByUsername(username)) !== undefined;
  try {
    const candidate = validateUsername(await deps.adapter.populateUsername(user, isTaken));
    const cleaned = validateUsername(await deps.adapter.cleanUsername(candidate));
    return (await isTaken(cleaned)) ? undefined : cleaned;
  } catch (error) {
    if (isLatchkeyError(error)) return undefined;
    throw error;
  }
}

/**
 * A new person at a provider: signed up at once when the settings allow it and the provider gave
 * an address that the project's cleanEmail accepts and nobody here has; otherwise the signup form,
 * with what the provider said kept for it. An address cleanEmail refuses is not signed up with:
 * the form shows the refusal (providerSignupInitial) and asks for another, as allauth's signup
 * form does when an automatic signup is not possible.
 */
export async function signUpFromProvider(deps: LatchkeyDeps, configured: ConfiguredProvider, profile: ProviderProfile, tokens: ProviderTokens | undefined, next: string, context: LoginContext): Promise<ProviderLoginResult> {
  const providerId = configured.provider.id;
  const login = socialLoginOf(providerId, profile);
  if (!(await deps.socialAdapter.isOpenForSignup(login))) return { status: 'signup_closed' };
  const fields = await deps.socialAdapter.populateUser(login);
  const given = providerEmailOf(profile, fields);
  const form: ProviderLoginResult = { status: 'signup_form', signup: { provider: providerId, profile, next, expiresAt: deps.clock.now().getTime() + PROVIDER_SIGNUP_SECONDS * 1000 } };
  if (given === '' || !(await deps.socialAdapter.isAutoSignupAllowed(login))) return form;
  const cleaned = await cleanAddress(deps, given);
  if ('refusal' in cleaned || (await emailInUse(deps, cleaned.email))) return form;
  const { email } = cleaned;
  let username: string | undefined;
  if (deps.settings.USERNAME_TYPE === 'username') {
    // A username the project's cleanUsername refuses: the form, where the person types another.
    username = await automaticUsername(deps, { ...(fields.username === undefined ? {} : { username: fields.username }), email, name: fields.name });
    if (username === undefined) return form;
  }
  // The project's fields the signup asks, from what populateUser gave: one missing or refused
  // (a required birth date no provider knows) is asked on the form.
  const ownChecks = new FieldChecks();
  const own = await cleanAskedUserFields(signupUserFields(deps.settings.ACCOUNT_SIGNUP_FIELDS, deps.userFields), fields, ownChecks);
  if (!ownChecks.clean) return form;
  let saved: SavedUser;
  try {
    const newUser = { ...own, ...(username === undefined ? {} : { username }), email, name: fields.name };
    saved = await savedUserOf(deps, newUser, { method: 'provider', provider: providerId, fields: {} });
  } catch (error) {
    // The project's saveUser refuses (a field of its own is missing, say): the form asks the person.
    if (isLatchkeyError(error)) return form;
    throw error;
  }
  try {
    return await createAndSignIn(deps, configured, profile, tokens, { email, username, own, saved }, context);
  } catch (error) {
    // Another sign-up took the address or the username meanwhile (the database's unique index
    // decided): the form.
    if (isLatchkeyError(error, 'email_taken') || isLatchkeyError(error, 'username_taken')) return form;
    throw error;
  }
}

/** What the social signup form starts with. */
export interface ProviderSignupInitial {
  /** The provider's address, as it gave it. */
  email: string;
  /** A username suggestion: the provider's, as populateUser gave it ('' for none). */
  username: string;
  /** Why that address cannot be signed up with (the project's cleanEmail, or Latchkey's validation, refused it), to show on its field. */
  emailRefusal?: Message;
  /** The project's fields the signup asks, as populateUser filled them (absent where it did not). */
  userFields: Record<string, unknown>;
}

/**
 * What the signup form starts with: the provider's address, judged as the form will judge it, so
 * that the person sees at once why it was not signed up with (and types another), and a username
 * suggestion.
 */
export async function providerSignupInitial(deps: LatchkeyDeps, pending: PendingProviderSignup): Promise<ProviderSignupInitial> {
  const fields = await deps.socialAdapter.populateUser(socialLoginOf(pending.provider, pending.profile));
  const email = providerEmailOf(pending.profile, fields);
  const asked = signupUserFields(deps.settings.ACCOUNT_SIGNUP_FIELDS, deps.userFields);
  const given = fields as object as Record<string, unknown>;
  const userFields = Object.fromEntries(asked.filter((field) => given[field.name] !== undefined).map((field) => [field.name, given[field.name]]));
  const initial = { email, username: fields.username ?? '', userFields };
  if (email === '') return initial;
  const cleaned = await cleanAddress(deps, email);
  return 'refusal' in cleaned ? { ...initial, emailRefusal: cleaned.refusal.text } : initial;
}

/**
 * The social signup form's answer. Throws LatchkeyError for a field to correct: 'email_taken'
 * (sign in to that account first, then connect), 'username_taken', an invalid address or
 * username; 'signup_closed' when signup closed meanwhile; 'social_account_exists' when the same
 * provider account was signed up in another tab meanwhile.
 */
export async function completeProviderSignup(
  deps: LatchkeyDeps,
  configured: ConfiguredProvider,
  pending: PendingProviderSignup,
  /** `submitted`: everything the form or JSON body held (no password), for the adapter's saveUser. */
  input: { email: string; username: string; userFields?: Readonly<Record<string, unknown>>; submitted?: Readonly<Record<string, unknown>> },
  context: LoginContext,
): Promise<ProviderLoginResult> {
  const { profile } = pending;
  if (!(await deps.socialAdapter.isOpenForSignup(socialLoginOf(pending.provider, profile)))) throw new LatchkeyError('signup_closed', SIGNUP_CLOSED);
  await deps.rateLimits.enforce('signup', { ip: context.client.ip });
  // Both fields judged, and both refusals given at once (the form shows each under its field).
  const checks = new FieldChecks();
  const username =
    deps.settings.USERNAME_TYPE === 'username'
      ? await checks.check(async () => {
          // A username the project's cleanUsername refuses: the form, where the person types another.
          const cleanUsername = validateUsername(await deps.adapter.cleanUsername(validateUsername(input.username)));
          if (await deps.store.users.findByUsername(cleanUsername)) throw new LatchkeyError('username_taken', USERNAME_TAKEN, { param: 'username' });
          return cleanUsername;
        })
      : undefined;
  const taken = new LatchkeyError('email_taken', emailTakenMessage(configured.provider.name), { param: 'email' });
  const email = await checks.check(async () => {
    if (input.email.trim() === '') throw new LatchkeyError('invalid_email', 'This field is required.', { param: 'email', reason: 'required' });
    const cleaned = await cleanAddress(deps, input.email);
    if ('refusal' in cleaned) throw cleaned.refusal;
    if (await emailInUse(deps, cleaned.email)) throw taken;
    return cleaned.email;
  });
  const own = await cleanAskedUserFields(signupUserFields(deps.settings.ACCOUNT_SIGNUP_FIELDS, deps.userFields), input.userFields ?? {}, checks);
  checks.finish();
  if (email === undefined) throw new Error('A provider signup passed its checks without an address.');
  const fields = await deps.socialAdapter.populateUser(socialLoginOf(pending.provider, profile));
  const newUser = { ...own, ...(username === undefined ? {} : { username }), email, name: fields.name };
  const saved = await savedUserOf(deps, newUser, { method: 'provider', provider: pending.provider, fields: input.submitted ?? {} });
  try {
    return await createAndSignIn(deps, configured, profile, undefined, { email, username, own, saved }, context);
  } catch (error) {
    if (isLatchkeyError(error, 'email_taken')) throw taken;
    throw error;
  }
}

async function createAndSignIn(
  deps: LatchkeyDeps,
  configured: ConfiguredProvider,
  profile: ProviderProfile,
  tokens: ProviderTokens | undefined,
  fields: { email: string; username: string | undefined; own: Record<string, UserFieldValue>; saved: SavedUser },
  context: LoginContext,
): Promise<ProviderLoginResult> {
  const providerId = configured.provider.id;
  const firstFactor = providerFirstFactor(providerId, profile);
  const verified = profile.emails.some((address) => address.email.toLowerCase() === fields.email.toLowerCase() && address.verified);
  const now = deps.clock.now();
  // Under optional verification an unverified address is sent its link, as a local signup's is
  // (the stages do it under mandatory). Under verification by code a code would be bound to a
  // client session this flow does not keep: the person asks for one from the email page instead,
  // where their session keeps it. The confirm_email limit is counted first, so that the mail can
  // be queued in the account's own transaction.
  const mailsLink = !verified && emailVerificationFor(deps.settings, firstFactor) === 'optional' && !deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED;
  const mayMail = mailsLink && (await deps.rateLimits.consume('confirm_email', { ip: context.client.ip, key: fields.email })).allowed;
  let confirmation: QueuedMail | undefined;
  const user = await createUser(
    deps,
    { ...fields.own, ...(fields.username === undefined ? {} : { username: fields.username }), email: fields.email, name: fields.saved.name, password: null, emailVerified: verified },
    // The account, its social account and tokens, their audit records and the confirmation mail:
    // one transaction.
    async (change, created) => {
      const { repositories } = change;
      const account = await repositories.socialAccounts.create({ userId: created.id, provider: providerId, uid: profile.uid, extraData: profile.extraData, dateJoined: now, lastLogin: now });
      await storeProviderTokens(deps, repositories, account.id, configured.app, tokens);
      await change.record('user_signed_up', created.id, context.client, signedUpData({ provider: providerId }, fields.saved));
      await change.record('social_account_added', created.id, context.client, { provider: providerId });
      const address = mayMail ? await repositories.emailAddresses.findForUser(created.id, fields.email) : undefined;
      if (address) confirmation = (await queueEmailConfirmation(deps, change, created, address, context.client)).mail;
    },
  );
  // A failed delivery stays in the outbox, which tries it again; the sign-in goes on.
  await deliverMail(deps, confirmation);
  return { status: 'login', login: await beginLogin(deps, user, firstFactor, context) };
}
