import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, type LatchkeyError } from '../../core/errors.js';
import type { Settings } from '../../config/settings.js';
import type { LatchkeyUrls } from '../../config/url-names.js';
import { msg } from '../../core/i18n/message.js';
import { isFailedSignInRefusal } from '../../login/stage-refusals.js';
import { remembersLogin } from '../../login/remember.js';
import type { ConfiguredProvider } from '../../socialaccount/directory.js';
import type { SocialAccount } from '../../socialaccount/model.js';
import { connectSocialAccount } from '../../socialaccount/flows/connect.js';
import { claimSignInState, finishProviderLogin, type SignInState } from '../../socialaccount/flows/provider-login.js';
import { ProviderError, type RedirectProvider, type SignInProvider } from '../../socialaccount/providers/provider.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { answeredOverLoginLimit, parkPost, takeParkedPost, type ParkingSpot } from '../kit/parked-post.js';
import { settleProviderLogin, signedInRequester, takeSignIn } from './provider-sign-ins.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { inRequestLanguage } from '../kit/request-language.js';
import { frontendTargetOr } from '../kit/safe-redirect.js';
import type { LoginOutcome } from '../kit/session-state.js';

/**
 * The redirect URI registered at the provider (a SAML app's is its ACS): from SITE_URL, never from
 * the request's Host header.
 */
export function providerCallbackUri(ctx: HttpContext, configured: Pick<ConfiguredProvider, 'provider' | 'slug'>): string {
  const { urls } = ctx.deps;
  const { provider } = configured;
  const path =
    provider.protocol === 'saml'
      ? urls.urlFor('saml_acs', { organization: provider.saml.organization })
      : urls.urlFor(provider.type === 'openid_connect' ? 'openid_connect_callback' : 'socialaccount_provider_callback', { provider: configured.slug });
  return new URL(path, ctx.deps.settings.SITE_URL).toString();
}

/**
 * What a provider's callback came to, for the door that started the sign-in to present:
 * - `failed`: `cancelled` when the person said no at the provider, else `unknown` (a forged,
 *   replayed or expired state, a provider error, a bad token: logged for the operator, never shown);
 * - `login`: the login pipeline's outcome, settled in the session like any login;
 * - `signup_closed`, `signup_form` (the pending signup is kept in the session for the form);
 * - `connected` / `updated` for a connect (with the provider account), or `connect_refused` (not
 *   the user who started it, no longer a recent proof of identity, or the provider account
 *   belongs to someone else);
 * - `refused`: the project's SocialAccountAdapter.preSocialLogin refused a login or a connect.
 */
export type CallbackResult =
  | { kind: 'failed'; error: 'cancelled' | 'unknown' }
  | { kind: 'login'; outcome: LoginOutcome }
  | { kind: 'signup_closed' }
  | { kind: 'signup_form' }
  | { kind: 'connected' | 'updated'; account: SocialAccount }
  | { kind: 'refused'; refusal: LatchkeyError }
  | { kind: 'connect_refused'; error: 'permission_denied' | 'reauthentication_required' | 'connected_other'; refusal?: LatchkeyError };

/**
 * The sign-in started with `state`, taken from this client's session and claimed: it must be the
 * provider's, unused and unexpired. Undefined (and logged) otherwise: a forged, replayed or
 * expired answer, or one started in another browser.
 */
export async function takeClaimedSignIn(ctx: HttpContext, request: FastifyRequest, providerId: string, state: string | undefined): Promise<SignInState | undefined> {
  const signIn = state === undefined || state === '' ? undefined : await takeSignIn(ctx, request, state);
  if (signIn && (await claimSignInState(ctx.deps, providerId, state!, signIn))) return signIn;
  request.log.warn({ provider: providerId }, 'social sign-in answer with an unknown, used or expired state');
  return undefined;
}

/** What a provider said about the person, once its answer is verified. */
type ProviderAnswer = Parameters<typeof connectSocialAccount>[3];

/**
 * A provider's answer to a sign-in this client started, for every door and every protocol (an
 * OAuth 2.0 callback, a SAML response): verified by `verify`, then given to the login (or connect)
 * flow and settled in the session like any login.
 */
export async function settleProviderAnswer(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  configured: ConfiguredProvider,
  signIn: SignInState,
  verify: () => Promise<ProviderAnswer>,
): Promise<CallbackResult> {
  let answer: ProviderAnswer;
  try {
    answer = await verify();
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.reason === 'cancelled') return { kind: 'failed', error: 'cancelled' };
    request.log.warn({ provider: configured.provider.id, reason: error.message }, 'social sign-in failed');
    return { kind: 'failed', error: 'unknown' };
  }
  if (signIn.process === 'connect') return connect(ctx, request, configured, signIn, answer);
  let result: Awaited<ReturnType<typeof finishProviderLogin>>;
  try {
    result = await finishProviderLogin(ctx.deps, configured, answer, signIn.next, loginContextOf(ctx, request));
  } catch (error) {
    // A login stage that cannot go on (ACCOUNT_LOGIN_BY_CODE_REQUIRED for an account without an
    // address, its code mail limited or not sent): the sign-in failed, for the operator's log.
    if (!isFailedSignInRefusal(error)) throw error;
    request.log.warn({ provider: configured.provider.id, code: error.code }, 'social sign-in stopped by a login stage');
    return { kind: 'failed', error: 'unknown' };
  }
  return settleProviderLogin(ctx, request, reply, result, { remember: remembersLogin(ctx.deps.settings), next: signIn.next });
}

/**
 * The OAuth 2.0 callback: the state must be one this client started; then the provider trades
 * the code for the person. `signIn` is undefined when the state was not this client's, so the
 * door knows nothing of where it came from.
 */
/** How a provider finishes a sign-in at its callback: only the OAuth 2.0 kinds have one (SAML answers at its ACS). */
function redirectCompletionOf(provider: SignInProvider | undefined): RedirectProvider['completeAuthorization'] | undefined {
  return provider?.protocol === 'oauth2' ? provider.completeAuthorization.bind(provider) : undefined;
}

async function receiveProviderCallback(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  configured: ConfiguredProvider,
  completeAuthorization: RedirectProvider['completeAuthorization'],
  callbackUrl: URL,
): Promise<{ signIn: SignInState | undefined; result: CallbackResult }> {
  const { provider } = configured;
  // A state sent twice is no state: which copy a check read would be a guess.
  const states = callbackUrl.searchParams.getAll('state');
  const state = states.length === 1 ? states[0] : undefined;
  const signIn = await takeClaimedSignIn(ctx, request, provider.id, state);
  if (!signIn) return { signIn: undefined, result: { kind: 'failed', error: 'unknown' } };
  const redirectUri = providerCallbackUri(ctx, configured);
  const result = await settleProviderAnswer(ctx, request, reply, configured, signIn, () => completeAuthorization({ callbackUrl, redirectUri, expectedState: state!, pending: signIn.pending }));
  return { signIn, result };
}

async function connect(ctx: HttpContext, request: FastifyRequest, configured: ConfiguredProvider, signIn: SignInState, answer: Parameters<typeof connectSocialAccount>[3]): Promise<CallbackResult> {
  // The connect belongs to the user who started it: signed out (or someone else) since, it is refused.
  const requester = await signedInRequester(ctx, request);
  if (!requester || requester.user.id !== signIn.userId) return { kind: 'connect_refused', error: 'permission_denied' };
  try {
    const connected = await connectSocialAccount(ctx.deps, requester, configured, answer, clientOf(request));
    if (connected.status === 'refused') return { kind: 'refused', refusal: connected.refusal };
    if (connected.status === 'connected') logMailFailures(request, [connected.notification], 'account connected notice');
    return { kind: connected.status, account: connected.account };
  } catch (error) {
    if (isLatchkeyError(error, 'social_account_exists')) return { kind: 'connect_refused', error: 'connected_other', refusal: error };
    if (isLatchkeyError(error, 'reauthentication_required')) return { kind: 'connect_refused', error: 'reauthentication_required', refusal: error };
    throw error;
  }
}

/**
 * Where a sign-in a single-page app started ends: back at its frontend URL, with `error` and
 * `error_process` on failure (allauth headless's contract); what happened otherwise the app
 * reads from the session (signed in, or a pending stage or signup form).
 */
function frontendRedirectUrl(frontendUrl: string, process: SignInState['process'], result: CallbackResult): string {
  const error =
    result.kind === 'failed' || result.kind === 'connect_refused'
      ? result.error
      : result.kind === 'signup_closed'
        ? 'signup_closed'
        : result.kind === 'refused'
          ? result.refusal.code
          : undefined;
  return error === undefined ? frontendUrl : frontendErrorUrl(frontendUrl, process, error);
}

/** Where a sign-in a single-page app started may return to: this site, and the front ends allowed to call the API (CORS_ALLOWED_ORIGINS). */
export function allowedFrontendOrigins(settings: Pick<Settings, 'SITE_URL' | 'CORS_ALLOWED_ORIGINS'>): string[] {
  return [settings.SITE_URL, ...settings.CORS_ALLOWED_ORIGINS];
}

/** The frontend URL with `error` and `error_process` added (a sign-in that could not even start, or whose callback failed). */
export function frontendErrorUrl(frontendUrl: string, process: SignInState['process'], error: string): string {
  // The frontend URL may be a path on this site or an absolute URL (an allowed origin).
  const relative = frontendUrl.startsWith('/');
  const url = new URL(frontendUrl, 'http://relative.invalid');
  url.searchParams.set('error', error);
  url.searchParams.set('error_process', process);
  return relative ? `${url.pathname}${url.search}${url.hash}` : url.toString();
}

/**
 * A provider's login URL: an OpenID Connect app's under `oidc/` (openid_connect_login), a SAML
 * app's under `saml/` by its organisation slug (saml_login), the others' under their slug, their
 * id or their kind's slug (socialaccount_provider_login: `amazon-cognito/login/`, as allauth's).
 */
export function providerLoginUrl(urls: LatchkeyUrls, configured: Pick<ConfiguredProvider, 'provider' | 'slug'>): string {
  const { provider } = configured;
  if (provider.protocol === 'saml') return urls.urlFor('saml_login', { organization: provider.saml.organization });
  return urls.urlFor(provider.type === 'openid_connect' ? 'openid_connect_login' : 'socialaccount_provider_login', { provider: configured.slug });
}

/**
 * The provider a login or callback URL names, served at that URL (an OpenID Connect app only under
 * oidc/, an app whose kind has a slug only at the slug); undefined is a 404.
 */
export async function providerAtUrl(ctx: HttpContext, request: FastifyRequest, underOidc: boolean): Promise<ConfiguredProvider | undefined> {
  const { provider: segment } = request.params as { provider: string };
  const directory = ctx.deps.providerDirectory;
  // An app whose id is the segment first (a provider_id may look like a kind's slug), then the
  // app of the kind served at that slug: amazon-cognito/login/ is amazon_cognito's.
  let configured = await directory.provider(segment);
  const slugKind = underOidc ? undefined : directory.registry.kindWithSlug(segment);
  if ((!configured || configured.slug !== segment) && slugKind) configured = await directory.provider(slugKind.id);
  // A SAML app is served under saml/ by its organisation slug only (saml-endpoints.ts); an app of
  // a kind with a slug is not served at its id, so that one sign-in has one callback URL.
  if (!configured || configured.provider.protocol === 'saml' || configured.slug !== segment) return undefined;
  return (configured.provider.type === 'openid_connect') === underOidc ? configured : undefined;
}

/** How a door answers a callback that no single-page app started (or whose state is lost: `signIn` undefined). */
export type CallbackPresenter = (request: FastifyRequest, reply: FastifyReply, result: CallbackResult, signIn: SignInState | undefined) => Promise<FastifyReply>;

/**
 * The callback routes registered at the providers, `oidc/<provider_id>/login/callback/` for an
 * OpenID Connect app and `<provider>/login/callback/` for the others, for whichever door serves
 * them: the pages, or the headless API alone under HEADLESS_ONLY (allauth keeps these URLs then).
 * A sign-in a single-page app started returns to its frontend URL, whatever came of it; any other
 * is the door's to present.
 */
export function registerProviderCallbacks(scope: FastifyInstance, ctx: HttpContext, presentOther: CallbackPresenter): void {
  for (const underOidc of [true, false]) {
    scope.get(ctx.deps.urls.route(underOidc ? 'openid_connect_callback' : 'socialaccount_provider_callback'), async (request, reply) => {
      const configured = await providerAtUrl(ctx, request, underOidc);
      const completeAuthorization = redirectCompletionOf(configured?.provider);
      if (!configured || !completeAuthorization) return reply.callNotFound();
      const callbackUrl = new URL(request.url, ctx.deps.settings.SITE_URL);
      const { signIn, result } = await receiveProviderCallback(ctx, request, reply, configured, completeAuthorization, callbackUrl);
      return presentCallbackResult(ctx, reply, result, signIn, (presented) => presentOther(request, reply, presented, signIn));
    });
  }
  registerFormPostCallbacks(scope, ctx, presentOther);
}

/** What a form_post callback may carry (Apple's: `user` is the name, sent on the first authorisation only); nothing else is kept. */
const FORM_POST_FIELDS = ['code', 'state', 'user', 'id_token', 'error', 'error_description'] as const;

/** The longest field kept: codes and states are short, an ID token a few kilobytes; more is no provider's answer. */
const FORM_POST_FIELD_CHARS = 16 * 1024;

interface ParkedCallback {
  provider: string;
  fields: Record<string, string>;
}

function formPostSpot(urls: LatchkeyUrls, configured: ConfiguredProvider): ParkingSpot {
  const finish = configured.provider.type === 'openid_connect' ? 'openid_connect_callback_finish' : 'socialaccount_provider_callback_finish';
  return { cookie: 'provider_form_post', key: '_provider_form_post', finishPath: urls.urlFor(finish, { provider: configured.slug }) };
}

/**
 * The callbacks of providers that answer with a cross-site POST (formPostCallback: OAuth 2.0
 * response_mode=form_post, Apple's), which arrives without the SameSite=Lax session cookie and so
 * without the sign-in it belongs to. The POST (CSRF-exempt: it comes from the provider's site, and
 * the state is what ties it to a sign-in) is parked (parked-post.ts) and the browser sent to
 * `callback/finish/`, whose same-site GET carries the session and runs the usual callback with the
 * parked fields as the callback URL's query.
 */
function registerFormPostCallbacks(scope: FastifyInstance, ctx: HttpContext, presentOther: CallbackPresenter): void {
  const { urls } = ctx.deps;
  for (const underOidc of [true, false]) {
    const at = async (request: FastifyRequest) => {
      const configured = await providerAtUrl(ctx, request, underOidc);
      const provider = configured?.provider;
      const completeAuthorization = provider?.protocol === 'oauth2' && provider.formPostCallback === true ? redirectCompletionOf(provider) : undefined;
      return configured && completeAuthorization ? { configured, completeAuthorization } : undefined;
    };
    scope.post(urls.route(underOidc ? 'openid_connect_callback' : 'socialaccount_provider_callback'), { config: { csrf: false } }, async (request, reply) => {
      const found = await at(request);
      if (!found) return reply.callNotFound();
      if (await answeredOverLoginLimit(ctx, request, reply)) return reply;
      const body = typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
      const fields: Record<string, string> = {};
      for (const name of FORM_POST_FIELDS) {
        const value = body[name];
        if (typeof value !== 'string' || value === '') continue;
        if (value.length > FORM_POST_FIELD_CHARS) {
          const tooLarge = msg('The provider\'s {field} is too large.', { field: name });
          return reply.code(400).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(inRequestLanguage(request, tooLarge));
        }
        fields[name] = value;
      }
      const parked: ParkedCallback = { provider: found.configured.provider.id, fields };
      return parkPost(ctx, reply, formPostSpot(urls, found.configured), parked);
    });
    scope.get(urls.route(underOidc ? 'openid_connect_callback_finish' : 'socialaccount_provider_callback_finish'), async (request, reply) => {
      const found = await at(request);
      if (!found) return reply.callNotFound();
      const { configured, completeAuthorization } = found;
      const parked = await takeParkedPost<ParkedCallback>(ctx, request, reply, formPostSpot(urls, configured));
      if (!parked || parked.provider !== configured.provider.id) {
        request.log.warn({ provider: configured.provider.id }, 'provider callback finish without a parked answer (expired, used, or another browser)');
        return presentOther(request, reply, { kind: 'failed', error: 'unknown' }, undefined);
      }
      const callbackUrl = new URL(providerCallbackUri(ctx, configured));
      for (const [name, value] of Object.entries(parked.fields)) callbackUrl.searchParams.set(name, value);
      const { signIn, result } = await receiveProviderCallback(ctx, request, reply, configured, completeAuthorization, callbackUrl);
      return presentCallbackResult(ctx, reply, result, signIn, (presented) => presentOther(request, reply, presented, signIn));
    });
  }
}

/**
 * A sign-in a single-page app started returns to its frontend URL, whatever came of it; any other
 * is the door's to present. The stored URL goes through the redirect rule again on its way out
 * (kit/safe-redirect.ts): one the rule no longer allows is the door's to present too.
 */
export function presentCallbackResult(
  ctx: HttpContext,
  reply: FastifyReply,
  result: CallbackResult,
  signIn: SignInState | undefined,
  presentOther: (result: CallbackResult) => Promise<FastifyReply>,
): Promise<FastifyReply> | FastifyReply {
  if (signIn?.frontendUrl !== undefined) {
    const back = frontendTargetOr(ctx.deps.adapter, frontendRedirectUrl(signIn.frontendUrl, signIn.process, result), allowedFrontendOrigins(ctx.deps.settings), undefined);
    if (back !== undefined) return reply.code(302).header('cache-control', 'no-store').redirect(back);
  }
  return presentOther(result);
}
