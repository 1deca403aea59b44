import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { isLatchkeyError, type LatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { remembersLogin } from '../../login/remember.js';
import type { ConfiguredProvider } from '../../socialaccount/directory.js';
import { disconnectSocialAccount, listSocialAccounts } from '../../socialaccount/flows/connections.js';
import { parseSignInProcess, startProviderLogin, type SignInState, type StartProcess } from '../../socialaccount/flows/provider-login.js';
import { providerSignupInitial } from '../../socialaccount/flows/provider-signup.js';
import { ProviderError } from '../../socialaccount/providers/provider.js';
import type { HttpContext } from '../kit/context.js';
import { providerAtUrl, providerCallbackUri, providerLoginUrl, registerProviderCallbacks, type CallbackResult } from '../social/provider-callback.js';
import { completeWaitingProviderSignup, keepSignIn, waitingProviderSignup, type SettledProviderLogin } from '../social/provider-sign-ins.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { submittedFields, typedAgain } from '../kit/signup-fields.js';
import { formValueOfField, userFieldInput, userFieldsFromForm } from '../kit/user-field-form.js';
import { signupUserFields } from '../../config/signup-fields.js';
import { registerSamlEndpoints } from '../social/saml-endpoints.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { presentLogin } from './login-outcome.js';
import { emptyForm, flash, formFields, formWithError, redirect, refusalStatus, renderPage, requireUser, type FormState } from './page.js';

/**
 * How the pages present the flows' 'reauthentication_required': the reauthentication page, which
 * returns to `back` (a path on this site) once the person has proved who they are.
 */
function reauthenticateFirst(ctx: HttpContext, reply: FastifyReply, back: string): FastifyReply {
  return redirect(reply, ctx.deps.urls.urlFor('account_reauthenticate', {}, { next: back }));
}

/**
 * Where a connect resumes once the person has reauthenticated: the provider's connect button,
 * with the `next` the connect was asked to lead to (the connections page, its default, left out).
 * The reauthentication page follows it as a safe `next`: a same-site path whose query holds
 * another, percent-encoded, which the button's page checks again when it reads it.
 */
function connectButtonPath(ctx: HttpContext, configured: ConfiguredProvider, next: string): string {
  const { urls } = ctx.deps;
  return `${providerLoginUrl(urls, configured)}?process=connect${next === '' || next === urls.urlFor('socialaccount_connections') ? '' : `&next=${encodeURIComponent(next)}`}`;
}

/** A provider's answer to a login, as the pages present it once settled: the login's outcome, the signup form, or signup closed. */
async function presentProviderLogin(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, settled: SettledProviderLogin, next: string): Promise<FastifyReply> {
  switch (settled.kind) {
    case 'login':
      return presentLogin(ctx, request, reply, settled.outcome, next);
    case 'signup_closed':
      return renderPage(ctx, request, reply, 'account/signup_closed.html', { title: msg('Sign up closed') }, 403);
    case 'signup_form':
      return redirect(reply, ctx.deps.urls.urlFor('socialaccount_signup'));
    case 'refused':
      return refusedByProject(ctx, request, reply, settled.refusal, 'socialaccount_login_error');
  }
}

/** The project's refusal (preSocialLogin): its message, on the error page for a login, on the connections page for a connect. */
async function refusedByProject(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, refusal: LatchkeyError, page: 'socialaccount_login_error' | 'socialaccount_connections'): Promise<FastifyReply> {
  await flash(ctx, request, reply, { level: 'error', text: refusal.text });
  return redirect(reply, ctx.deps.urls.urlFor(page));
}

/** The providers a login or signup page links to (none configured: none). */
export async function providerLinks(ctx: HttpContext): Promise<{ name: string; login_url: string }[]> {
  return (await ctx.deps.providerDirectory.offered()).map((configured) => ({ name: configured.provider.name, login_url: providerLoginUrl(ctx.deps.urls, configured) }));
}

/**
 * Signing in with a provider through the pages (allauth's provider login and callback views), at
 * `oidc/<provider_id>/login/` for an OpenID Connect app and `<provider>/login/` for the others:
 * - a GET only asks, with a button, unless SOCIALACCOUNT_LOGIN_ON_GET: a link or an image on
 *   another site must not start a sign-in (login CSRF);
 * - the POST (with the CSRF token) keeps the sign-in's state in the session and sends the browser
 *   to the provider; `process=connect` adds the provider account to the signed-in user instead
 *   (the flows ask for a recent sign-in: the page sends the person to reauthenticate first); an
 *   unknown `process` is refused, on the error page;
 * - the callback (social/provider-callback.ts) accepts only a state this browser started, once, and
 *   runs the same login pipeline as every other way in.
 * Every failure ends on the error page (401) or, when the person declined at the provider, the
 * cancelled page; what went wrong is logged for the operator, never shown.
 */
export function registerSocialAccountPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const providerOf = (request: FastifyRequest, underOidc: boolean) => providerAtUrl(ctx, request, underOidc);

  function failed(request: FastifyRequest, reply: FastifyReply, configured: ConfiguredProvider, error: unknown): FastifyReply {
    if (!(error instanceof ProviderError)) throw error;
    if (error.reason === 'cancelled') return redirect(reply, urls.urlFor('socialaccount_login_cancelled'));
    request.log.warn({ provider: configured.provider.id, reason: error.message }, 'social sign-in failed');
    return redirect(reply, urls.urlFor('socialaccount_login_error'));
  }

  /** An unknown `process`: nothing starts, and the page says the sign-in failed. */
  function unknownProcess(request: FastifyRequest, reply: FastifyReply, configured: ConfiguredProvider): FastifyReply {
    request.log.warn({ provider: configured.provider.id }, 'social sign-in with an unknown process refused');
    return redirect(reply, urls.urlFor('socialaccount_login_error'));
  }

  async function start(request: FastifyRequest, reply: FastifyReply, configured: ConfiguredProvider, fields: { next: unknown; process: unknown }): Promise<FastifyReply> {
    const process = parseSignInProcess(fields.process);
    if (process === undefined) return unknownProcess(request, reply, configured);
    let asked: StartProcess = { process: 'login' };
    if (process === 'connect') {
      const signedIn = await requireUser(ctx, request, reply);
      if ('response' in signedIn) return signedIn.response;
      asked = { process, requester: { user: signedIn.user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) } };
    }
    // A connect without a `next` of its own lands where the social adapter's getConnectRedirectUrl says.
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    try {
      const started = await startProviderLogin(ctx.deps, configured.provider, { ...asked, redirectUri: providerCallbackUri(ctx, configured), next });
      await keepSignIn(ctx, request, reply, started.state, started.record);
      return redirect(reply, started.url.toString());
    } catch (error) {
      // Back to this provider's connect button once the person has proved who they are.
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, reply, connectButtonPath(ctx, configured, next));
      return failed(request, reply, configured, error);
    }
  }

  async function confirmation(request: FastifyRequest, reply: FastifyReply, configured: ConfiguredProvider): Promise<FastifyReply> {
    const query = request.query as Record<string, unknown>;
    if (ctx.deps.settings.SOCIALACCOUNT_LOGIN_ON_GET) return start(request, reply, configured, { next: query.next, process: query.process });
    const { provider } = configured;
    let providerOrigin: string;
    try {
      providerOrigin = await provider.authorizationOrigin();
    } catch (error) {
      return failed(request, reply, configured, error);
    }
    const process = parseSignInProcess(query.process);
    if (process === undefined) return unknownProcess(request, reply, configured);
    const connect = process === 'connect';
    const context = {
      title: connect ? msg('Connect {provider}', { provider: provider.name }) : msg('Sign in via {provider}', { provider: provider.name }),
      provider: { name: provider.name, login_url: providerLoginUrl(urls, configured) },
      process: connect ? 'connect' : 'login',
      next: redirectTargetOr(ctx.deps.adapter, query.next, ''),
    };
    // The button's POST is answered with a redirect to the provider, which the page's policy must allow.
    return renderPage(ctx, request, reply, 'socialaccount/login.html', context, 200, [providerOrigin]);
  }

  async function presentCallback(request: FastifyRequest, reply: FastifyReply, result: CallbackResult, signIn: SignInState | undefined): Promise<FastifyReply> {
    const next = signIn?.next ?? '';
    switch (result.kind) {
      case 'failed':
        return redirect(reply, urls.urlFor(result.error === 'cancelled' ? 'socialaccount_login_cancelled' : 'socialaccount_login_error'));
      case 'login':
      case 'signup_closed':
      case 'signup_form':
        return presentProviderLogin(ctx, request, reply, result, next);
      case 'connected':
      case 'updated':
        await flash(ctx, request, reply, { level: 'info', text: result.kind === 'connected' ? msg('The third-party account has been connected.') : msg('The third-party account has been updated.') });
        return redirect(reply, redirectTargetOr(ctx.deps.adapter, next, ctx.deps.socialAdapter.getConnectRedirectUrl(result.account)));
      case 'refused':
        return refusedByProject(ctx, request, reply, result.refusal, signIn?.process === 'connect' ? 'socialaccount_connections' : 'socialaccount_login_error');
      case 'connect_refused':
        if (result.error === 'permission_denied') return redirect(reply, urls.urlFor('socialaccount_login_error'));
        // Too long at the provider since the last proof of identity: prove it again, then connect again.
        if (result.error === 'reauthentication_required') {
          const configured = signIn && (await ctx.deps.providerDirectory.provider(signIn.provider));
          return reauthenticateFirst(ctx, reply, configured ? connectButtonPath(ctx, configured, next) : urls.urlFor('socialaccount_connections'));
        }
        await flash(ctx, request, reply, { level: 'error', text: result.refusal?.text ?? msg('The third-party account could not be connected.') });
        return redirect(reply, urls.urlFor('socialaccount_connections'));
    }
  }

  for (const underOidc of [true, false]) {
    const login = urls.route(underOidc ? 'openid_connect_login' : 'socialaccount_provider_login');
    scope.get(login, async (request, reply) => {
      const configured = await providerOf(request, underOidc);
      return configured ? confirmation(request, reply, configured) : reply.callNotFound();
    });
    scope.post(login, async (request, reply) => {
      const configured = await providerOf(request, underOidc);
      return configured ? start(request, reply, configured, formFields(request.body, ['next', 'process'])) : reply.callNotFound();
    });
  }
  // SAML apps: the same button and start, at allauth's URL by organisation slug.
  const samlAt = async (request: FastifyRequest) => ctx.deps.providerDirectory.samlProvider((request.params as { organization: string }).organization);
  scope.get(urls.route('saml_login'), async (request, reply) => {
    const configured = await samlAt(request);
    return configured ? confirmation(request, reply, configured) : reply.callNotFound();
  });
  scope.post(urls.route('saml_login'), async (request, reply) => {
    const configured = await samlAt(request);
    return configured ? start(request, reply, configured, formFields(request.body, ['next', 'process'])) : reply.callNotFound();
  });

  // The callback: a sign-in a single-page app started (headless) returns to it, whatever came of it.
  registerProviderCallbacks(scope, ctx, presentCallback);
  registerSamlEndpoints(scope, ctx, presentCallback);

  registerProviderSignupPage(scope, ctx);
  registerConnectionsPage(scope, ctx);
  scope.get(urls.route('socialaccount_login_cancelled'), (request, reply) => renderPage(ctx, request, reply, 'socialaccount/login_cancelled.html', { title: msg('Sign in cancelled') }));
  scope.get(urls.route('socialaccount_login_error'), (request, reply) => renderPage(ctx, request, reply, 'socialaccount/authentication_error.html', { title: msg('Third-party sign in failure') }, 401));
}

/**
 * The social signup form (allauth's socialaccount_signup): shown when a provider's answer
 * could not sign a new person up alone (the address it gave has an account here, the project's
 * cleanEmail refuses it, it gave none, or SOCIALACCOUNT_AUTO_SIGNUP is off). Without a pending
 * signup it sends the person to sign in.
 */
function registerProviderSignupPage(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const asked = signupUserFields(ctx.deps.settings.ACCOUNT_SIGNUP_FIELDS, ctx.deps.userFields);
  async function form(request: FastifyRequest, reply: FastifyReply, state: FormState | undefined, status = 200): Promise<FastifyReply> {
    const waiting = await waitingProviderSignup(ctx, request);
    if (!waiting) return redirect(reply, urls.urlFor('account_login'));
    const { pending, configured } = waiting;
    let shown = state;
    if (!shown) {
      // The provider's address, with the project's refusal of it (cleanEmail) under its field: the person types another.
      const { emailRefusal, userFields, ...values } = await providerSignupInitial(ctx.deps, pending);
      const own = Object.fromEntries(asked.map((field) => [field.name, formValueOfField(field, userFields[field.name])]));
      shown = { values: { ...own, ...values }, errors: emailRefusal === undefined ? {} : { email: [emailRefusal] } };
    }
    const context = {
      title: msg('Sign up'),
      provider_name: configured.provider.name,
      with_username: ctx.deps.settings.USERNAME_TYPE === 'username',
      // The project's fields the signup asks (ACCOUNT_SIGNUP_FIELDS), as populateUser filled them.
      user_fields: asked.map((field) => userFieldInput(field)),
      form: shown,
    };
    return renderPage(ctx, request, reply, 'socialaccount/signup.html', context, status);
  }

  scope.get(urls.route('socialaccount_signup'), (request, reply) => form(request, reply, undefined));

  scope.post(urls.route('socialaccount_signup'), async (request, reply) => {
    const fields = formFields(request.body, ['email', 'username']);
    let completed;
    try {
      completed = await completeWaitingProviderSignup(ctx, request, reply, { ...fields, userFields: userFieldsFromForm(asked, request.body), submitted: submittedFields(request.body) }, { remember: remembersLogin(ctx.deps.settings) });
    } catch (error) {
      return form(request, reply, formWithError({ ...typedAgain(request.body), ...fields }, error), refusalStatus(reply, error));
    }
    if (!completed) return redirect(reply, urls.urlFor('account_login'));
    return presentProviderLogin(ctx, request, reply, completed.settled, completed.next);
  });
}

/** The connections page: the user's accounts at providers, a way to connect another, and disconnecting one. */
function registerConnectionsPage(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  async function connections(request: FastifyRequest, reply: FastifyReply, user: User, form: FormState = emptyForm(), status = 200): Promise<FastifyReply> {
    const offered = await ctx.deps.providerDirectory.offered();
    const names = new Map(offered.map(({ provider }) => [provider.id, provider.name]));
    const accounts = (await listSocialAccounts(ctx.deps, user)).map((account) => ({ id: account.id, provider: names.get(account.provider) ?? account.provider, uid: account.uid }));
    const providers = offered.map((configured) => ({ name: configured.provider.name, connect_url: `${providerLoginUrl(urls, configured)}?process=connect` }));
    return renderPage(ctx, request, reply, 'socialaccount/connections.html', { title: msg('Account connections'), accounts, providers, form }, status);
  }

  scope.get(urls.route('socialaccount_connections'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return connections(request, reply, signedIn.user);
  });

  // Removing a way to sign in is a change of credentials: the flow asks for a recent sign-in.
  scope.post(urls.route('socialaccount_connections'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const { account } = formFields(request.body, ['account']);
    try {
      const requester = { user: signedIn.user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
      const removed = await disconnectSocialAccount(ctx.deps, requester, /^\d{1,15}$/.test(account) ? Number(account) : 0, clientOf(request));
      logMailFailures(request, [removed.notification], 'account disconnected notice');
    } catch (error) {
      if (isLatchkeyError(error, 'reauthentication_required')) return reauthenticateFirst(ctx, reply, urls.urlFor('socialaccount_connections'));
      return connections(request, reply, signedIn.user, formWithError({}, error), refusalStatus(reply, error));
    }
    await flash(ctx, request, reply, { level: 'info', text: msg('The third-party account has been disconnected.') });
    return redirect(reply, urls.urlFor('socialaccount_connections'));
  });
}
