import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  type Uint8Array_,
} from '@simplewebauthn/server';
import { decodeAttestationObject, isoBase64URL, parseAuthenticatorData } from '@simplewebauthn/server/helpers';
import { constantTimeEqual, randomToken, sha256Hex } from '../core/crypto.js';
import { LatchkeyError } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';
import type { User } from '../account/model.js';
import type { Authenticator } from './model.js';
import { msg } from '../core/i18n/message.js';

/**
 * WebAuthn (passkeys and security keys) as the domain sees it, on @simplewebauthn/server: the
 * relying party from the settings, the ceremonies' options and checks, and a key's stored form.
 *
 * A key is an authenticator of type `webauthn` whose data keeps what allauth.mfa keeps (`name`,
 * and `credential`: the browser's registration response, as JSON) so that keys move between the
 * two, plus what allauth does not keep: the public key, the signature counter, and the user handle
 * the key was made for. A key imported from allauth has none of these: its public key is read from
 * the attestation in `credential`, its counter starts at 0, and its handle is allauth's (the user's
 * id as a string).
 */

/** How long a ceremony's challenge may be answered: the browser's own prompt times out at the same. */
export const CEREMONY_SECONDS = 300;

/**
 * What a ceremony is for. The challenge is checked against its purpose, so an answer to the
 * options of one (a second-factor prompt) cannot be replayed as another (a passkey login).
 */
export type CeremonyPurpose = 'register' | 'login' | 'authenticate' | 'reauthenticate';

/**
 * A ceremony under way, kept by the adapter in the client's session between the options and the
 * answer (nothing in it is secret: a challenge is only worth anything once, in this session).
 */
export interface WebauthnCeremony {
  purpose: CeremonyPurpose;
  challenge: string;
  /** The user the ceremony is for; a passkey login's is unknown until the key answers. */
  userId?: number;
  /** Registration: the handle the new key is made for, and whether it is to be a passkey. */
  userHandle?: string;
  passwordless?: boolean;
  expiresAt: string;
}

/** The relying party: the site's domain, its name, and the origins a ceremony may come from. */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

export function relyingParty(settings: LatchkeyDeps['settings']): RelyingParty {
  const site = new URL(settings.SITE_URL);
  const origins = settings.MFA_WEBAUTHN_ALLOWED_ORIGINS.length > 0 ? settings.MFA_WEBAUTHN_ALLOWED_ORIGINS : [site.origin, ...settings.CORS_ALLOWED_ORIGINS];
  return { id: settings.MFA_WEBAUTHN_RP_ID ?? site.hostname, name: settings.SITE_NAME, origins };
}

/** A stored key, read from its authenticator. */
export interface WebauthnKey {
  authenticator: Authenticator;
  credentialId: string;
  publicKey: Uint8Array_;
  counter: number;
  transports: AuthenticatorTransport[];
  userHandle: string;
  name: string;
  /** Whether it can sign in on its own (a discoverable credential: a passkey). */
  passwordless: boolean;
}

interface StoredKeyData {
  name?: unknown;
  credential?: RegistrationResponseJSON;
  public_key?: unknown;
  sign_count?: unknown;
  user_handle?: unknown;
  passwordless?: unknown;
}

/** Reads a key from its authenticator; undefined for data that is not a key (it then matches nothing). */
export function webauthnKey(authenticator: Authenticator): WebauthnKey | undefined {
  const data = authenticator.data as StoredKeyData;
  const credential = data.credential;
  if (authenticator.type !== 'webauthn' || typeof credential !== 'object' || credential === null || typeof credential.id !== 'string') return undefined;
  try {
    const publicKey = typeof data.public_key === 'string' ? isoBase64URL.toBuffer(data.public_key) : publicKeyOfAttestation(credential);
    if (!publicKey) return undefined;
    return {
      authenticator,
      credentialId: credential.id,
      publicKey,
      counter: typeof data.sign_count === 'number' ? data.sign_count : 0,
      transports: Array.isArray(credential.response?.transports) ? (credential.response.transports as AuthenticatorTransport[]) : [],
      // allauth makes a key for the handle `str(user.pk)`.
      userHandle: typeof data.user_handle === 'string' ? data.user_handle : isoBase64URL.fromUTF8String(String(authenticator.userId)),
      name: typeof data.name === 'string' ? data.name : 'Security key',
      passwordless: typeof data.passwordless === 'boolean' ? data.passwordless : credential.clientExtensionResults?.credProps?.rk === true,
    };
  } catch {
    return undefined;
  }
}

/** The public key inside a registration's attestation, as allauth reads it every time. */
function publicKeyOfAttestation(credential: RegistrationResponseJSON): Uint8Array_ | undefined {
  const attestation = decodeAttestationObject(isoBase64URL.toBuffer(credential.response.attestationObject));
  return parseAuthenticatorData(attestation.get('authData')).credentialPublicKey;
}

export function webauthnKeys(authenticators: readonly Authenticator[]): WebauthnKey[] {
  return authenticators.flatMap((authenticator) => webauthnKey(authenticator) ?? []);
}

/**
 * The WebAuthn user handle of a user: random, never the database id (a handle is readable by
 * anyone holding the authenticator, and an id would tell how many accounts the site has). Every
 * key of a user is made for one handle, so that an authenticator replaces its old passkey for this
 * site rather than keeping two; a user whose keys all came from allauth gets a fresh one.
 */
export function userHandleFor(keys: readonly WebauthnKey[]): string {
  const own = keys.find((key) => typeof key.authenticator.data.user_handle === 'string');
  return own?.userHandle ?? randomToken(32);
}

function ceremony(deps: Pick<LatchkeyDeps, 'clock'>, purpose: CeremonyPurpose, challenge: string, extra: Partial<WebauthnCeremony> = {}): WebauthnCeremony {
  return { purpose, challenge, ...extra, expiresAt: new Date(deps.clock.now().getTime() + CEREMONY_SECONDS * 1000).toISOString() };
}

/**
 * The options for making a new key. A passkey (passwordless) must be discoverable and verify the
 * person (a PIN or a fingerprint), since it will sign in alone; a security key used after a
 * password need not. The user's keys are excluded, so one authenticator is not registered twice.
 */
export async function registrationOptions(
  deps: Pick<LatchkeyDeps, 'settings' | 'clock'>,
  user: Pick<User, 'id' | 'email' | 'username' | 'name'>,
  keys: readonly WebauthnKey[],
  passwordless: boolean,
): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; ceremony: WebauthnCeremony }> {
  const rp = relyingParty(deps.settings);
  const userHandle = userHandleFor(keys);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: isoBase64URL.toBuffer(userHandle),
    userName: user.username ?? user.email,
    userDisplayName: user.name || (user.username ?? user.email),
    timeout: CEREMONY_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: keys.map((key) => ({ id: key.credentialId, transports: key.transports })),
    authenticatorSelection: passwordless
      ? { residentKey: 'required', requireResidentKey: true, userVerification: 'required' }
      : { residentKey: 'discouraged', userVerification: 'discouraged' },
    extensions: { credProps: true },
  });
  return { options, ceremony: ceremony(deps, 'register', options.challenge, { userId: user.id, userHandle, passwordless }) };
}

/**
 * The options for proving a key: the user's keys for a second factor or a reauthentication; none
 * for a passkey login, where the browser offers the discoverable credentials it holds for the site.
 */
export async function authenticationOptions(
  deps: Pick<LatchkeyDeps, 'settings' | 'clock'>,
  purpose: Exclude<CeremonyPurpose, 'register'>,
  user?: { id: number; keys: readonly WebauthnKey[] },
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; ceremony: WebauthnCeremony }> {
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(deps.settings).id,
    allowCredentials: user?.keys.map((key) => ({ id: key.credentialId, transports: key.transports })) ?? [],
    timeout: CEREMONY_SECONDS * 1000,
    // A passkey login has no other factor: it must verify the person. Elsewhere the key follows a
    // password or a session already, and asking for a PIN on every use would only add friction.
    userVerification: purpose === 'login' ? 'required' : 'preferred',
  });
  return { options, ceremony: ceremony(deps, purpose, options.challenge, user ? { userId: user.id } : {}) };
}

export const INVALID_CREDENTIAL = msg('The security key could not be verified. Please try again.');

function refused(): LatchkeyError {
  return new LatchkeyError('incorrect_code', INVALID_CREDENTIAL, { param: 'credential' });
}

/**
 * Uses up a ceremony's challenge: it must be the one expected, not expired, and not answered
 * before, in any session or instance (a one-time claim, kept where the rate limits are). A
 * replayed answer fails here, before any signature is checked.
 */
export async function claimCeremony(deps: Pick<LatchkeyDeps, 'clock' | 'oneTimeClaims'>, kept: WebauthnCeremony | undefined, purpose: CeremonyPurpose): Promise<WebauthnCeremony> {
  const now = deps.clock.now();
  if (!kept || kept.purpose !== purpose || !(Date.parse(kept.expiresAt) > now.getTime())) throw refused();
  if (!(await deps.oneTimeClaims.claim(`webauthn:challenge:${sha256Hex(kept.challenge)}`, CEREMONY_SECONDS, now))) throw refused();
  return kept;
}

/** What a new key's authenticator is made of, once its registration was verified. */
export interface VerifiedRegistration {
  credentialId: string;
  data: Record<string, unknown>;
}

/** Checks a registration answer against its (claimed) ceremony: challenge, origin, relying party, user verification for a passkey. */
export async function verifyRegistration(
  deps: Pick<LatchkeyDeps, 'settings'>,
  claimed: WebauthnCeremony,
  response: RegistrationResponseJSON,
  name: string,
): Promise<VerifiedRegistration> {
  const rp = relyingParty(deps.settings);
  let result;
  try {
    result = await verifyRegistrationResponse({
      response,
      expectedChallenge: claimed.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: claimed.passwordless === true,
    });
  } catch {
    throw refused();
  }
  if (!result.verified) throw refused();
  const { credential } = result.registrationInfo;
  const passwordless = claimed.passwordless === true || response.clientExtensionResults?.credProps?.rk === true;
  return {
    credentialId: credential.id,
    data: {
      name,
      credential: response,
      public_key: isoBase64URL.fromBuffer(credential.publicKey),
      sign_count: credential.counter,
      user_handle: claimed.userHandle,
      passwordless,
    },
  };
}

/** A verified use of a key: which, and its new signature counter. */
export interface VerifiedAssertion {
  key: WebauthnKey;
  newCounter: number;
}

/**
 * Checks an assertion: the key must exist, belong to the expected user (for a passkey login, the
 * user its handle names), and sign this ceremony's challenge for our relying party and an allowed
 * origin; a passkey login must have verified the person. A signature counter that did not go up
 * (for a key that counts) means a cloned key: refused, and said so to the caller.
 */
export async function verifyAssertion(
  deps: Pick<LatchkeyDeps, 'settings' | 'store'>,
  claimed: WebauthnCeremony,
  response: AuthenticationResponseJSON,
): Promise<VerifiedAssertion | { refused: 'counter'; key: WebauthnKey }> {
  if (typeof response?.id !== 'string' || typeof response.response !== 'object' || response.response === null) throw refused();
  const authenticator = await deps.store.authenticators.findByCredentialId(response.id);
  const key = authenticator && webauthnKey(authenticator);
  if (!key) throw refused();
  if (claimed.userId !== undefined && key.authenticator.userId !== claimed.userId) throw refused();
  if (claimed.purpose === 'login') {
    const handle = response.response.userHandle;
    if (typeof handle !== 'string' || !constantTimeEqual(handle, key.userHandle)) throw refused();
  }
  const rp = relyingParty(deps.settings);
  let result;
  try {
    result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: claimed.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: { id: key.credentialId, publicKey: key.publicKey, counter: key.counter, transports: key.transports },
      requireUserVerification: claimed.purpose === 'login',
    });
  } catch (error) {
    if (error instanceof Error && /counter/i.test(error.message)) return { refused: 'counter', key };
    throw refused();
  }
  if (!result.verified) throw refused();
  return { key, newCounter: result.authenticationInfo.newCounter };
}
