/**
 * The two JSON Web Tokens of Sign in with Apple, as Apple's "Creating a client secret" and
 * "Verifying a user" pages describe them
 * (https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret,
 * https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api/verifying_a_user):
 * the client secret Latchkey signs with the app's .p8 key for each token request, and the ID
 * token Apple signs, checked against Apple's published keys.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload, type RemoteJWKSetOptions } from 'jose';
import type { Clock } from '../../../core/clock.js';
import type { SettingReader } from '../app-settings.js';
import { ID_TOKEN_CLOCK_TOLERANCE_SECONDS, refuseIssuedInTheFuture } from '../id-token-clock.js';
import { describeNetworkFailure } from '../network-errors.js';
import { ProviderError, type ProviderHttp } from '../provider.js';

/** Apple's issuer: every ID token's `iss`, and every client secret's `aud`. */
export const APPLE_ISSUER = 'https://appleid.apple.com';

/**
 * How long a client secret Latchkey signs is valid. Apple accepts up to six months; one is made
 * for each token request, so an hour is ample and a leaked one is soon worthless.
 */
const CLIENT_SECRET_SECONDS = 60 * 60;

/** Apple signs ID tokens with RS256 today; the other asymmetric algorithms are taken should it move. HS* and `none` never are. */
const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

/** The .p8 key as a KeyObject when it is an EC P-256 private key (what ES256 signs with), else undefined. */
function signingKeyOf(pem: string): KeyObject | undefined {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : undefined;
  } catch {
    return undefined;
  }
}

/** settings.certificate_key: the .p8 file's text. The message never repeats it: it is a private key. */
export const aSigningKey: SettingReader<KeyObject> = (value, key) => {
  if (typeof value !== 'string' || value.trim() === '') return { problem: `${key} must be the text of the .p8 private key Apple gave for Sign in with Apple` };
  const signingKey = signingKeyOf(value);
  return signingKey === undefined ? { problem: `${key} is not a PEM EC P-256 private key (the .p8 file Apple gave, BEGIN PRIVATE KEY to END PRIVATE KEY)` } : { value: signingKey };
};

/** The client secret for one token request: ES256, `kid` the Key ID, issued by the team to the client id for Apple, on Latchkey's clock. */
export function appleClientSecret(input: { signingKey: KeyObject; keyId: string; teamId: string; clientId: string; clock: Clock }): Promise<string> {
  const now = Math.floor(input.clock.now().getTime() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: input.keyId })
    .setIssuer(input.teamId)
    .setSubject(input.clientId)
    .setAudience(APPLE_ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + CLIENT_SECRET_SECONDS)
    .sign(input.signingKey);
}

export type AppleIdTokenVerifier = (idToken: string) => Promise<JWTPayload>;

/**
 * A verifier of Apple ID tokens for an app: signed by one of the keys at `keysUrl`, issued by
 * Apple, for one of the app's client ids, unexpired and not dated in the future on Latchkey's
 * clock (id-token-clock.ts). Anything else, or keys that cannot be fetched, is
 * ProviderError('failed').
 */
export function appleIdTokenVerifier(id: string, keysUrl: URL, clientIds: readonly string[], http: ProviderHttp, clock: Clock): AppleIdTokenVerifier {
  const options: RemoteJWKSetOptions = { timeoutDuration: http.timeoutSeconds * 1000 };
  if (http.fetch !== undefined) options[customFetch] = http.fetch;
  const keys = createRemoteJWKSet(keysUrl, options);
  return async (idToken) => {
    let payload: JWTPayload;
    try {
      const verified = await jwtVerify(idToken, keys, {
        issuer: APPLE_ISSUER,
        audience: [...clientIds],
        algorithms: ID_TOKEN_ALGORITHMS,
        requiredClaims: ['exp', 'iat', 'sub'],
        currentDate: clock.now(),
        clockTolerance: ID_TOKEN_CLOCK_TOLERANCE_SECONDS,
      });
      payload = verified.payload;
    } catch (error) {
      if (error instanceof joseErrors.JOSEError && !(error instanceof joseErrors.JWKSTimeout)) {
        throw new ProviderError('failed', `${id}: the ID token was refused: ${error.code} ${error.message}`);
      }
      throw new ProviderError('failed', `${id}: Apple's keys at ${keysUrl.origin}${keysUrl.pathname} could not be read: ${describeNetworkFailure(error, http)}`);
    }
    refuseIssuedInTheFuture(id, payload.iat, clock);
    return payload;
  };
}
