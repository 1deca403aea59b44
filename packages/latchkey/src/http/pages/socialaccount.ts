import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { disconnectSocialAccount, listSocialAccounts } from '../../socialaccount/flows/connections.js';
import { claimSignInState, finishProviderLogin, startProviderLogin, type ProviderLoginResult } from '../../socialaccount/flows/provider-login.js';
import { ProviderError, type RedirectProvider } from '../../socialaccount/providers/provider.js';
import type { HttpContext } from '../kit/context.js';
import { loginContextOf } from '../kit/login-context.js';
import { keepSignIn, takeSignIn } from '../kit/provider-sign-ins.js';
import { safeRedirectOr } from '../kit/safe-redirect.js';
import { settleLogin } from '../kit/session-state.js';
import { presentLogin } from './login-outcome.js';
import { clientOf } from '../kit/request-info.js';
import { emptyForm, flash, formFields, formWithError, redirect, redirectUnlessRecentlyAuthenticated, refusalStatus, renderPage, requireUser, type FormState } from './page.js';

export const LOGIN_CANCELLED_PAGE = '/accounts/3rdparty/login/cancelled/';
export const LOGIN_ERROR_PAGE = '/accounts/3rdparty/login/error/';
export const CONNECTIONS_PAGE = '/accounts/3rdparty/';

/** An OpenID Connect app's pages, under SOCIALACCOUNT_OPENID_CONNECT_URL_PREFIX's default, `oidc`. */
export function providerLoginPath(providerId: string): string {
  return `/accounts/oidc/${encodeURIComponent(providerId)}/login/`;
}

/** The redirect URI registered at the provider: from SITE_URL, never from the request's Host header. */
function callbackUri(page: HttpContext, providerId: string): string {
  return new URL(`${providerLoginPath(providerId)}callback/`, page.deps.settings.SITE_URL).toString();
}

function stringParameter(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * Signing in with a provider through the pages (allauth's provider login and callback views):
 * - GET `oidc/<id>/login/` only asks, with a button, unless SOCIALACCOUNT_LOGIN_ON_GET: a link or
 *   an image on another site must not start a sign-in (login CSRF);
 * - POST (with the CSRF token) keeps the sign-in's state in the session and sends the browser to
 *   the provider;
 * - the callback accepts only a state this browser started, once, and before it expires, then
 *   runs the same login pipeline as every other way in.
 * Every failure ends on the error page (401) or, when the person declined at the provider, the
 * cancelled page; what went wrong is logged for the operator, never shown.
 */
export function registerSocialAccountPages(scope: FastifyInstance, page: HttpContext): void {
  /** The OpenID Connect provider the URL names; undefined (a 404) for any other id. */
  async function providerOf(request: FastifyRequest): Promise<RedirectProvider | undefined> {
    const { providerId } = request.params as { providerId: string };
    const provider = await page.deps.socialProviders.provider(providerId);
    return provider?.type === 'openid_connect' ? provider : undefined;
  }

  async function start(request: FastifyRequest, reply: FastifyReply, provider: RedirectProvider, nextValue: unknown): Promise<FastifyReply> {
    try {
      const started = await startProviderLogin(page.deps, provider, { redirectUri: callbackUri(page, provider.id), next: safeRedirectOr(nextValue, '') });
      await keepSignIn(page, request, reply, started.state, started.record);
      return redirect(reply, started.url.toString());
    } catch (error) {
      return failed(request, reply, provider, error);
    }
  }

  /** A provider's failure: logged for the operator, the error page (or the cancelled one) for the person. */
  function failed(request: FastifyRequest, reply: FastifyReply, provider: RedirectProvider, error: unknown): FastifyReply {
    if (!(error instanceof ProviderError)) throw error;
    if (error.reason === 'cancelled') return redirect(reply, LOGIN_CANCELLED_PAGE);
    request.log.warn({ provider: provider.id, reason: error.message }, 'social sign-in failed');
    return redirect(reply, LOGIN_ERROR_PAGE);
  }

  scope.get('/accounts/oidc/:providerId/login/', async (request, reply) => {
    const provider = await providerOf(request);
    if (!provider) return reply.callNotFound();
    const next = (request.query as Record<string, unknown>).next;
    if (page.deps.settings.SOCIALACCOUNT_LOGIN_ON_GET) return start(request, reply, provider, next);
    let providerOrigin: string;
    try {
      providerOrigin = await provider.authorizationOrigin();
    } catch (error) {
      return failed(request, reply, provider, error);
    }
    const context = { title: `Sign in via ${provider.name}`, provider: { name: provider.name, login_url: providerLoginPath(provider.id) }, next: safeRedirectOr(next, '') };
    // The button's POST is answered with a redirect to the provider, which the page's policy must allow.
    return renderPage(page, request, reply, 'socialaccount/login.html', context, 200, [providerOrigin]);
  });

  scope.post('/accounts/oidc/:providerId/login/', async (request, reply) => {
    const provider = await providerOf(request);
    if (!provider) return reply.callNotFound();
    return start(request, reply, provider, formFields(request.body, ['next']).next);
  });

  scope.get('/accounts/oidc/:providerId/login/callback/', async (request, reply) => {
    const provider = await providerOf(request);
    if (!provider) return reply.callNotFound();
    const state = stringParameter((request.query as Record<string, unknown>).state);
    const signIn = state === '' ? undefined : await takeSignIn(page, request, state);
    if (!(await claimSignInState(page.deps, provider.id, state, signIn)) || !signIn) {
      request.log.warn({ provider: provider.id }, 'social sign-in callback with an unknown, used or expired state');
      return redirect(reply, LOGIN_ERROR_PAGE);
    }
    let result: ProviderLoginResult;
    try {
      const callbackUrl = new URL(request.url, page.deps.settings.SITE_URL);
      const { profile } = await provider.completeAuthorization({ callbackUrl, redirectUri: callbackUri(page, provider.id), expectedState: state, pending: signIn.pending });
      result = await finishProviderLogin(page.deps, provider.id, profile, loginContextOf(page, request));
    } catch (error) {
      return failed(request, reply, provider, error);
    }
    return presentProviderLogin(request, reply, provider, result, signIn.next);
  });

  async function presentProviderLogin(request: FastifyRequest, reply: FastifyReply, provider: RedirectProvider, result: ProviderLoginResult, next: string): Promise<FastifyReply> {
    switch (result.status) {
      case 'login': {
        const remember = page.deps.settings.ACCOUNT_SESSION_REMEMBER ?? false;
        const outcome = await settleLogin(page, request, reply, result.login, { remember, next });
        return presentLogin(page, request, reply, outcome, next);
      }
      case 'signup_closed':
        return renderPage(page, request, reply, 'account/signup_closed.html', { title: 'Sign up closed' }, 403);
      case 'email_taken':
        return renderPage(page, request, reply, 'socialaccount/signup_refused.html', { title: 'Sign in first', provider_name: provider.name, email_taken: true }, 409);
      case 'email_required':
        return renderPage(page, request, reply, 'socialaccount/signup_refused.html', { title: 'An email address is needed', provider_name: provider.name, email_taken: false }, 409);
    }
  }

  /** The connections page: the user's accounts at providers, each with the provider's name when it is still configured. */
  async function connections(request: FastifyRequest, reply: FastifyReply, user: User, form: FormState = emptyForm(), status = 200): Promise<FastifyReply> {
    const names = new Map((await page.deps.socialProviders.offered()).map((app) => [app.id, app.name]));
    const accounts = (await listSocialAccounts(page.deps, user)).map((account) => ({ id: account.id, provider: names.get(account.provider) ?? account.provider, uid: account.uid }));
    return renderPage(page, request, reply, 'socialaccount/connections.html', { title: 'Account connections', accounts, form }, status);
  }

  scope.get(CONNECTIONS_PAGE, async (request, reply) => {
    const signedIn = await requireUser(page, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return connections(request, reply, signedIn.user);
  });

  // Removing a way to sign in is a change of credentials: it needs a recent sign-in.
  scope.post(CONNECTIONS_PAGE, async (request, reply) => {
    const signedIn = await requireUser(page, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const stale = await redirectUnlessRecentlyAuthenticated(page, request, reply);
    if (stale) return stale.response;
    const { account } = formFields(request.body, ['account']);
    try {
      await disconnectSocialAccount(page.deps, signedIn.user, /^\d{1,15}$/.test(account) ? Number(account) : 0, clientOf(request));
    } catch (error) {
      return connections(request, reply, signedIn.user, formWithError({}, error), refusalStatus(reply, error));
    }
    await flash(page, request, reply, { level: 'info', text: 'The third-party account has been disconnected.' });
    return redirect(reply, CONNECTIONS_PAGE);
  });

  scope.get(LOGIN_CANCELLED_PAGE, (request, reply) => renderPage(page, request, reply, 'socialaccount/login_cancelled.html', { title: 'Sign in cancelled' }));
  scope.get(LOGIN_ERROR_PAGE, (request, reply) => renderPage(page, request, reply, 'socialaccount/authentication_error.html', { title: 'Third-party sign in failure' }, 401));
}
