import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software WebAuthn authenticator for tests without a browser: it makes ES256 credentials and
 * answers ceremonies exactly as the WebAuthn Level 2 specification lays the bytes out (§6.1
 * authenticator data, §6.5 attestation object with the "none" format, §5.8.1 client data), so
 * the server checks it like any real key. The browser's part (the origin and the challenge in the
 * client data) can be set wrong on purpose, to test that the server refuses it. The Chromium
 * journeys use the browser's own virtual authenticator instead.
 */

interface StoredCredential {
  id: string;
  privateKey: KeyObject;
  rpId: string;
  userHandle: string;
  counter: number;
  discoverable: boolean;
}

export interface CeremonyOverrides {
  /** The origin the "browser" reports (default: the authenticator's origin). */
  origin?: string;
  /** The relying party the key signs for (default: the options' one). */
  rpId?: string;
  /** Whether the person was verified (a PIN, a fingerprint); default true. */
  userVerified?: boolean;
}

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;
const FLAG_ATTESTED_CREDENTIAL = 0x40;

function sha256(data: Uint8Array | string): Buffer {
  return createHash('sha256').update(data).digest();
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

/** The credential's public key as a COSE_Key map (RFC 9053 §7.1: EC2, P-256, ES256). */
function coseKey(privateKey: KeyObject): Uint8Array {
  const jwk = privateKey.export({ format: 'jwk' });
  const cose = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, isoBase64URL.toBuffer(jwk.x!)],
    [-3, isoBase64URL.toBuffer(jwk.y!)],
  ]);
  return isoCBOR.encode(cose);
}

export class SoftwareAuthenticator {
  readonly credentials = new Map<string, StoredCredential>();

  constructor(readonly origin: string) {}

  /** navigator.credentials.create(): a new credential for the options' relying party and user. */
  create(options: PublicKeyCredentialCreationOptionsJSON, overrides: CeremonyOverrides = {}): RegistrationResponseJSON {
    const rpId = overrides.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(16);
    const discoverable = options.authenticatorSelection?.residentKey === 'required' || options.authenticatorSelection?.residentKey === 'preferred';
    const credential: StoredCredential = { id: isoBase64URL.fromBuffer(id), privateKey, rpId, userHandle: options.user.id, counter: 0, discoverable };
    this.credentials.set(credential.id, credential);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_USER_PRESENT | (overrides.userVerified === false ? 0 : FLAG_USER_VERIFIED) | FLAG_ATTESTED_CREDENTIAL]),
      counterBytes(0),
      Buffer.alloc(16),
      idLength,
      id,
      coseKey(privateKey),
    ]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, overrides),
        attestationObject: isoBase64URL.fromBuffer(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: discoverable ? { credProps: { rk: true } } : {},
      authenticatorAttachment: 'platform',
    };
  }

  /**
   * navigator.credentials.get(): an assertion by the given credential, or by the first one the
   * options allow (a discoverable one of the relying party when they allow any). Each use counts
   * up, as a real key's counter does.
   */
  get(options: PublicKeyCredentialRequestOptionsJSON, overrides: CeremonyOverrides & { credentialId?: string; counter?: number } = {}): AuthenticationResponseJSON {
    const optionsRpId = options.rpId ?? new URL(this.origin).hostname;
    const rpId = overrides.rpId ?? optionsRpId;
    const allowed = options.allowCredentials?.map((descriptor) => descriptor.id) ?? [];
    const credential =
      (overrides.credentialId === undefined ? undefined : this.credentials.get(overrides.credentialId)) ??
      [...this.credentials.values()].find((candidate) => (allowed.length > 0 ? allowed.includes(candidate.id) : candidate.discoverable && candidate.rpId === optionsRpId));
    if (!credential) throw new Error('The software authenticator holds no credential these options allow.');
    credential.counter = overrides.counter ?? credential.counter + 1;
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([FLAG_USER_PRESENT | (overrides.userVerified === false ? 0 : FLAG_USER_VERIFIED)]),
      counterBytes(credential.counter),
    ]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, overrides);
    const signature = createSign('sha256').update(authData).update(sha256(isoBase64URL.toBuffer(clientDataJSON))).sign(credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON,
        authenticatorData: isoBase64URL.fromBuffer(new Uint8Array(authData)),
        signature: isoBase64URL.fromBuffer(new Uint8Array(signature)),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  private clientData(type: string, challenge: string, overrides: CeremonyOverrides): string {
    const json = JSON.stringify({ type, challenge, origin: overrides.origin ?? this.origin, crossOrigin: false });
    return isoBase64URL.fromUTF8String(json);
  }
}
