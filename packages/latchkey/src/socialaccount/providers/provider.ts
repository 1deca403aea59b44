import type { ProviderUserData } from '../adapter.js';
import type { ProviderHostRule } from './private-hosts.js';
import type { SamlSubject } from '../model.js';

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
  /** A SAML IdP's only: whom its assertion was for and in which of its sessions, which its single logout names. */
  samlSubject?: SamlSubject;
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

/** What every provider offers the sign-in flows, whatever its protocol. */
interface ProviderBasics {
  /** The id in URLs and in SocialAccount.provider: the app's provider_id, else its kind's id. */
  readonly id: string;
  /** Its kind's id (`github`, `openid_connect`). */
  readonly type: string;
  readonly name: string;
  /**
   * The origin the browser is sent to for a sign-in: a page whose form starts one must allow it in
   * its Content-Security-Policy's form-action, which also governs the redirect. Throws ProviderError.
   */
  authorizationOrigin(): Promise<string>;
  authorizationUrl(input: { redirectUri: string; state: string; extraScope?: string[] }): Promise<{ url: URL; pending: PendingAuthorization }>;
}

/**
 * A provider of the OAuth 2.0 kinds (OpenID Connect, the named ones, the dummy): the browser comes
 * back to its callback with a code.
 */
export interface RedirectProvider extends ProviderBasics {
  readonly protocol: 'oauth2';
  /** The callback's URL (with code/state/error/iss) -> the person. Throws ProviderError. */
  completeAuthorization(input: CallbackInput): Promise<{ profile: ProviderProfile; tokens: ProviderTokens }>;
  /** Headless token login: an id_token verified against the provider's JWKS (signature, iss, aud = client_id, exp, iat, algorithm allow-list). Throws ProviderError. */
  verifyIdToken?(idToken: string): Promise<ProviderProfile>;
  /** Headless token login with an access token the client got from the provider itself (Facebook's), checked to be for this app. Throws ProviderError. */
  verifyAccessToken?(accessToken: string): Promise<ProviderProfile>;
  /**
   * The provider answers with a cross-site POST to the callback (OAuth 2.0 response_mode=form_post,
   * Apple's), which a SameSite=Lax session cookie does not come with: the POST is parked and the
   * browser sent on to a same-site GET that finishes the sign-in.
   */
  readonly formPostCallback?: boolean;
}

/** A SAML 2.0 app (providers/saml/): the IdP answers at the app's ACS, not at a callback. */
export interface SamlProvider extends ProviderBasics {
  readonly protocol: 'saml';
  readonly saml: SamlServiceProvider;
}

/** What a kind builds from one app for the sign-in flows (the directory hands each out as a ConfiguredProvider), by protocol. */
export type SignInProvider = RedirectProvider | SamlProvider;

/**
 * The service-provider side of one SAML app: its URLs carry the organisation slug (the app's
 * client_id) rather than its id, the IdP's entity id. authorizationUrl sends the AuthnRequest
 * whose ID is samlRequestId(state), so that the response's InResponseTo leads back to the state.
 */
export interface SamlServiceProvider {
  readonly organization: string;
  /** reject_idp_initiated_sso: an unsolicited response is refused. */
  readonly rejectsUnsolicited: boolean;
  /** The SP metadata document an IdP administrator imports. */
  metadata(): string;
  /** The IdP's response, verified (providers/saml/response.ts); `requestId` undefined for an unsolicited one. Throws ProviderError. */
  verifyResponse(samlResponse: string, expected: { requestId: string | undefined; now: Date }): Promise<VerifiedSamlAnswer>;
  /**
   * An IdP's LogoutRequest at the SLS (signed, for this SLS, recent; saml/logout.ts): its ID, whose
   * sessions it names, and the LogoutResponse to send the browser back with. Throws ProviderError otherwise.
   */
  answerLogoutRequest(message: SamlLogoutMessage, now: Date): Promise<AcceptedLogoutRequest>;
}

/** A message at the SLS (HTTP-Redirect binding): its query parameters, each once, and the raw query its signature covers. */
export interface SamlLogoutMessage {
  fields: Record<string, string>;
  rawQuery: string;
}

/** A LogoutRequest, checked: its ID, until when that must be remembered to refuse it again, whose sessions it ends, and the answer. */
export interface AcceptedLogoutRequest {
  requestId: string;
  usableUntil: Date;
  /** Whether the request names the IdP session a sign-in was for: its NameID, and its SessionIndex when it names any. */
  names(signedIn: SamlSubject): boolean;
  /** The URL of the LogoutResponse to the IdP: Success when a session was ended, else Requester/UnknownPrincipal. */
  answerUrl(ended: boolean): Promise<string>;
}

export interface VerifiedSamlAnswer {
  profile: ProviderProfile;
  /** The assertion's id and how long it must be remembered, for the replay cache. */
  assertionId: string;
  usableUntil: Date;
}

/** The AuthnRequest ID for a sign-in's state: an XML ID must start with a letter or '_', a state may start with a digit or '-'. */
export function samlRequestId(state: string): string {
  return `_${state}`;
}

/** The state a response's InResponseTo names, undefined when it names none Latchkey could have sent. */
export function stateOfSamlRequestId(requestId: string | undefined): string | undefined {
  return requestId !== undefined && requestId.startsWith('_') && requestId.length > 1 ? requestId.slice(1) : undefined;
}

export interface CallbackInput {
  callbackUrl: URL;
  redirectUri: string;
  expectedState: string;
  pending: PendingAuthorization;
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

/**
 * How providers reach the network: an injectable fetch (tests; in production the directory gives
 * provider-fetch.ts's), a timeout (SOCIALACCOUNT_REQUESTS_TIMEOUT, seconds), and where a provider
 * may be (private-hosts.ts), which discovery holds the endpoints it names to; anywhere when absent.
 */
export interface ProviderHttp {
  fetch?: typeof fetch;
  timeoutSeconds: number;
  hostRule?: ProviderHostRule;
}
