import type { ProviderUserData } from '../adapter.js';

/**
 * What every provider a person can sign in with offers the sign-in flows: where to send the
 * browser, and what the callback tells about the person. The flows keep `pending` and `state` in
 * the sign-in's server-side state between the two calls; a provider keeps nothing per sign-in.
 */

/** One email address as a provider gave it; `verified` only when the provider vouches for it (true or the string "true", nothing else). */
export interface ProviderEmail {
  email: string;
  verified: boolean;
  primary: boolean;
}

/** What a provider says about the person, normalised. */
export interface ProviderProfile {
  uid: string;
  emails: ProviderEmail[];
  data: ProviderUserData;
  extraData: Record<string, unknown>;
}

export interface ProviderTokens {
  accessToken: string;
  refreshToken?: string;
  expiresAt?: Date;
  idToken?: string;
}

/** What must be kept (in the sign-in's server-side state) between the redirect and the callback. */
export interface PendingAuthorization {
  codeVerifier?: string;
  nonce?: string;
}

export interface RedirectProvider {
  /** The id in URLs and in SocialAccount.provider: the app's provider_id, else the provider type. */
  readonly id: string;
  readonly type: string;
  readonly name: string;
  /**
   * The origin the browser is sent to for a sign-in: a page whose form starts one must allow it in
   * its Content-Security-Policy's form-action, which also governs the redirect. Throws ProviderError.
   */
  authorizationOrigin(): Promise<string>;
  authorizationUrl(input: { redirectUri: string; state: string; extraScope?: string[] }): Promise<{ url: URL; pending: PendingAuthorization }>;
  /** The callback's URL (with code/state/error/iss) -> the person. Throws ProviderError. */
  completeAuthorization(input: {
    callbackUrl: URL;
    redirectUri: string;
    expectedState: string;
    pending: PendingAuthorization;
  }): Promise<{ profile: ProviderProfile; tokens: ProviderTokens }>;
  /** Headless token login: an id_token verified against the provider's JWKS (signature, iss, aud = client_id, exp, algorithm allow-list). Throws ProviderError. */
  verifyIdToken?(idToken: string): Promise<ProviderProfile>;
}

/** 'cancelled': the person said no at the provider (error=access_denied). 'failed': anything else; `message` is for logs only, never shown to the user. */
export class ProviderError extends Error {
  constructor(
    readonly reason: 'cancelled' | 'failed',
    message: string,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** How providers reach the network: an injectable fetch (tests) and a timeout (SOCIALACCOUNT_REQUESTS_TIMEOUT, seconds). */
export interface ProviderHttp {
  fetch?: typeof fetch;
  timeoutSeconds: number;
}
