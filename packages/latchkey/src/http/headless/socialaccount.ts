import { msg } from '../../core/i18n/message.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SIGNUP_CLOSED } from '../../account/flows/signup.js';
import type { User } from '../../account/model.js';
import { isLatchkeyError } from '../../core/errors.js';
import { disconnectSocialAccount, listSocialAccounts } from '../../socialaccount/flows/connections.js';
import { parseSignInProcess, signInProcessOf, startProviderLogin, type StartProcess } from '../../socialaccount/flows/provider-login.js';
import { providerSignupInitial, socialLoginOf } from '../../socialaccount/flows/provider-signup.js';
import { connectWithProviderToken, loginWithProviderToken, type ProviderTokenInput } from '../../socialaccount/flows/provider-token.js';
import { ProviderError } from '../../socialaccount/providers/provider.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject, textField } from '../kit/input.js';
import { loginContextOf } from '../kit/login-context.js';
import { allowedFrontendOrigins, frontendErrorUrl, providerCallbackUri, type CallbackPresenter } from '../social/provider-callback.js';
import { completeWaitingProviderSignup, keepSignIn, settleProviderLogin, signedInRequester, waitingProviderSignup, type SettledProviderLogin } from '../social/provider-sign-ins.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { submittedFields } from '../kit/signup-fields.js';
import { frontendTargetOr } from '../kit/safe-redirect.js';
import { loginOptionsOf } from './login-options.js';
import { providerAccountData, providerData, providerDataOf, takesProviderTokens, type ProviderData } from './provider-data.js';
import { sendHeadlessRefusal } from './refusals.js';
import { headlessTranslator, presentLogin, sendAuthenticated, sendEnvelope, sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

/** The form a browser posts to start a redirect sign-in (allauth's React example posts its CSRF token as a field). */
export const PROVIDER_REDIRECT_PATH = '/auth/provider/redirect';

const INVALID_URL = msg('Invalid URL.');

function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).header('cache-control', 'no-store').redirect(location);
}

/**
 * Signing in with a provider through the headless API (allauth.headless's provider endpoints),
 * over the same flows as the pages:
 * The flows decide what needs a recent proof of identity (connecting, disconnecting) and which
 * `process` is known; this API presents their refusals: a 401 with the reauthenticate flows, or
 * `?error=reauthentication_required` on a redirect.
 * - `auth/provider/redirect` (browser client only): a real form post that sends the browser to the
 *   provider; the provider's callback (social/provider-callback.ts) sends it back to `callback_url`,
 *   with `?error=&error_process=` on failure, and the front end reads the session to see where the
 *   sign-in stands (signed in, or a pending stage or signup form);
 * - `auth/provider/token`: an ID token the client got from the provider itself (a mobile app);
 * - `auth/provider/signup`: the form a provider's answer could not do without;
 * - `account/providers`: the signed-in user's provider accounts, and disconnecting one.
 */
export function registerSocialAccountRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;
  const { settings } = deps;

  /** A provider's answer to a login, settled, as this API presents it: the login's outcome, the pending signup form (401), or signup closed (403). */
  async function presentProviderLogin(request: FastifyRequest, reply: FastifyReply, settled: SettledProviderLogin): Promise<FastifyReply> {
    switch (settled.kind) {
      case 'login':
        return presentLogin(ctx, request, reply, settled.outcome);
      case 'signup_form':
        return sendUnauthenticated(ctx, request, reply);
      case 'signup_closed':
        return sendErrors(ctx, request, reply, 403, [{ message: SIGNUP_CLOSED, code: 'signup_closed' }]);
      case 'refused':
        return sendHeadlessRefusal(ctx, request, reply, settled.refusal);
    }
  }

  if (ctx.client === 'browser') {
    api.post(PROVIDER_REDIRECT_PATH, {
      schema: headlessOperation('post', {
        tag: 'Providers',
        summary: 'Sign in through the provider',
        description: 'A real form post (the answer is a redirect, which an XHR cannot follow) that sends the browser to the provider. Its callback sends it back to `callback_url`, with `error` and `error_process` in the query on failure (`cancelled`, `signup_closed`, `permission_denied`, `reauthentication_required`, `connected_other`, `unknown`); the front end then reads `auth/session` to see where the sign-in stands. A `callback_url` that is neither a path here nor at an allowed origin is refused (400, or HEADLESS_FRONTEND_URLS.socialaccount_login_error).',
        body: bodies.ProviderRedirect,
        form: true,
        responses: { 302: answers.ToProvider, 400: answers.Error },
      }),
    }, async (request, reply) => {
      const fields = bodyObject(request.body);
      const process = parseSignInProcess(fields.process);
      // An unknown process is refused below; until then its errors say 'login', allauth's default.
      const errorProcess = process ?? 'login';
      // Where the browser goes back to: only this site or a front end allowed to call the API, never
      // anywhere a link's author chose, and encoded as it will be sent. Without one the answer is the
      // front end's error route, or 400.
      const callbackUrl = frontendTargetOr(deps.adapter, textField(fields, 'callback_url'), allowedFrontendOrigins(settings), undefined);
      if (callbackUrl === undefined) {
        request.log.warn('headless provider redirect: callback_url refused');
        const errorPage = settings.HEADLESS_FRONTEND_URLS.socialaccount_login_error;
        if (errorPage !== undefined) return redirectTo(reply, frontendErrorUrl(errorPage, errorProcess, 'invalid_url'));
        return sendErrors(ctx, request, reply, 400, [{ message: INVALID_URL, code: 'invalid_url', param: 'callback_url' }]);
      }
      const back = (error: string) => redirectTo(reply, frontendErrorUrl(callbackUrl, errorProcess, error));
      const providerId = textField(fields, 'provider');
      const configured = providerId === undefined ? undefined : await deps.providerDirectory.provider(providerId);
      if (!configured || process === undefined) return back('unknown');
      let asked: StartProcess = { process: 'login' };
      if (process === 'connect') {
        const requester = await signedInRequester(ctx, request);
        if (!requester) return back('permission_denied');
        asked = { process, requester };
      }
      try {
        const redirectUri = providerCallbackUri(ctx, configured);
        const started = await startProviderLogin(deps, configured.provider, { ...asked, redirectUri, next: '', frontendUrl: callbackUrl });
        await keepSignIn(ctx, request, reply, started.state, started.record);
        return redirectTo(reply, started.url.toString());
      } catch (error) {
        if (isLatchkeyError(error, 'reauthentication_required')) return back('reauthentication_required');
        if (!(error instanceof ProviderError)) throw error;
        request.log.warn({ provider: configured.provider.id, reason: error.message }, 'social sign-in could not start');
        return back('unknown');
      }
    });
  }

  api.post('/auth/provider/token', {
    schema: headlessOperation('post', {
      tag: 'Providers',
      summary: 'Sign in with an ID token',
      description: 'An ID token the client got from the provider itself (a mobile app\'s own sign-in), checked against the app its `client_id` names: signature, issuer, audience, expiry, and `azp` when present. Then as any sign-in: 200, or 401 with the pending step (`mfa_authenticate`, `verify_email`) or the `provider_signup` form; 403 when signup is closed to a new person. `process: connect` adds the provider account to the signed-in user (after a recent proof of identity).',
      body: bodies.ProviderToken,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.AuthenticationOrReauthentication, 403: answers.Forbidden },
    }),
  }, async (request, reply) => {
    const fields = bodyObject(request.body);
    const input: ProviderTokenInput = { provider: fields.provider, token: fields.token };
    try {
      if (signInProcessOf(fields.process) === 'connect') {
        const requester = await signedInRequester(ctx, request);
        if (!requester) return await sendUnauthenticated(ctx, request, reply);
        const connected = await connectWithProviderToken(deps, requester, input, clientOf(request));
        if (connected.status === 'refused') return await sendHeadlessRefusal(ctx, request, reply, connected.refusal);
        if (connected.status === 'connected') logMailFailures(request, [connected.notification], 'account connected notice');
        return await sendAuthenticated(ctx, request, reply, requester.user);
      }
      const result = await loginWithProviderToken(deps, input, loginContextOf(ctx, request));
      return await presentProviderLogin(request, reply, await settleProviderLogin(ctx, request, reply, result, loginOptionsOf(ctx)));
    } catch (error) {
      if (isLatchkeyError(error) && error.cause instanceof ProviderError) request.log.warn({ reason: error.cause.message }, 'provider token refused');
      // A provider account connected to someone else is an input error here, as allauth's.
      return sendHeadlessRefusal(ctx, request, reply, error, { statuses: { social_account_exists: 400 } });
    }
  });

  // No signup waiting for its form (or its app gone): 409.
  api.get('/auth/provider/signup', {
    schema: headlessOperation('get', {
      tag: 'Providers',
      summary: "Read the provider's signup form",
      description: 'What the provider gave, for a signup it could not finish alone (its address has an account here, it gave none, or SOCIALACCOUNT_AUTO_SIGNUP is off); 409 when none waits.',
      responses: { 200: answers.ProviderSignup, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const waiting = await waitingProviderSignup(ctx, request);
    if (!waiting) return sendEnvelope(ctx, request, reply, 409);
    const { pending, configured } = waiting;
    const { profile } = pending;
    const initial = await providerSignupInitial(deps, pending);
    const { name } = await deps.socialAdapter.populateUser(socialLoginOf(pending.provider, profile));
    const provider = providerData(configured.app, takesProviderTokens(configured.provider));
    // The account to be: no id yet, no password (a provider's signup never has one).
    const user = {
      display: name || initial.username || initial.email || provider.name,
      has_usable_password: false,
      ...(initial.email === '' ? {} : { email: initial.email }),
      ...(settings.USERNAME_TYPE === 'username' && initial.username !== '' ? { username: initial.username } : {}),
    };
    const data = {
      email: profile.emails.map((address) => ({ email: address.email, primary: address.primary, verified: address.verified })),
      account: providerAccountData(profile, provider),
      user,
    };
    return sendOk(ctx, request, reply, { data });
  });

  api.post('/auth/provider/signup', {
    schema: headlessOperation('post', {
      tag: 'Providers',
      summary: "Complete the provider's signup",
      description: 'The address (and username) for the new account; then as any signup: 200, or 401 at `verify_email`. An address that has an account here is refused: sign in to it, then connect the provider.',
      body: bodies.ProviderSignup,
      limited: true,
      responses: { 200: answers.Authenticated, 400: answers.Error, 401: answers.Unauthenticated, 403: answers.Forbidden, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const fields = { email: textField(request.body, 'email') ?? '', username: textField(request.body, 'username') ?? '', userFields: bodyObject(request.body), submitted: submittedFields(request.body) };
    let completed;
    try {
      completed = await completeWaitingProviderSignup(ctx, request, reply, fields, loginOptionsOf(ctx));
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error);
    }
    if (!completed) return sendEnvelope(ctx, request, reply, 409);
    return presentProviderLogin(request, reply, completed.settled);
  });

  async function sendAccounts(request: FastifyRequest, reply: FastifyReply, user: User): Promise<FastifyReply> {
    const providers = new Map<string, ProviderData>();
    const data = [];
    for (const account of await listSocialAccounts(deps, user)) {
      if (!providers.has(account.provider)) {
        // An account whose app has since been removed is still listed (and can be disconnected).
        providers.set(account.provider, (await providerDataOf(ctx, account.provider)) ?? { id: account.provider, name: account.provider, flows: [] });
      }
      data.push(providerAccountData(account, providers.get(account.provider)!));
    }
    return sendOk(ctx, request, reply, { data });
  }

  api.get('/account/providers', {
    schema: headlessOperation('get', {
      tag: 'Account: providers',
      summary: 'List provider accounts',
      description: "The signed-in user's accounts at providers, oldest first.",
      responses: { 200: answers.ProviderAccounts, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    return sendAccounts(request, reply, user);
  });

  // Removing a way to sign in is a change of credentials: the flow asks for a recent proof of identity.
  api.delete('/account/providers', {
    schema: headlessOperation('delete', {
      tag: 'Account: providers',
      summary: 'Disconnect a provider account',
      description: 'By provider and uid; needs a recent proof of identity. Refused when it is the last way to sign in: `no_password`, or under mandatory verification `no_verified_email`; `account_not_found` for an account that is not the user\'s.',
      body: bodies.ProviderAccount,
      responses: { 200: answers.ProviderAccounts, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
    }),
  }, async (request, reply) => {
    const requester = await signedInRequester(ctx, request);
    if (!requester) return sendUnauthenticated(ctx, request, reply);
    const { user } = requester;
    // allauth names the account by provider and uid; the flow by its id.
    const providerId = textField(request.body, 'provider');
    const uid = textField(request.body, 'account');
    const account = (await listSocialAccounts(deps, user)).find((candidate) => candidate.provider === providerId && candidate.uid === uid);
    try {
      const removed = await disconnectSocialAccount(deps, requester, account?.id ?? 0, clientOf(request));
      logMailFailures(request, [removed.notification], 'account disconnected notice');
    } catch (error) {
      return sendHeadlessRefusal(ctx, request, reply, error, { statuses: { last_login_method: 400 } });
    }
    return sendAccounts(request, reply, user);
  });
}

/**
 * Under HEADLESS_ONLY, what a provider's callback answers when it cannot tell which front end
 * started the sign-in (its state is unknown, used or expired): the front end's error route
 * (HEADLESS_FRONTEND_URLS.socialaccount_login_error) with `?error=unknown`, else a plain 400.
 */
export function callbackWithoutFrontend(ctx: HttpContext): CallbackPresenter {
  return async (request, reply, _result, signIn) => {
    const errorPage = ctx.deps.settings.HEADLESS_FRONTEND_URLS.socialaccount_login_error;
    if (errorPage !== undefined) return redirectTo(reply, frontendErrorUrl(errorPage, signIn?.process ?? 'login', 'unknown'));
    // A person reads this in the browser the provider sent back: in the request's language.
    const translator = headlessTranslator(ctx, request);
    return reply
      .code(400)
      .header('cache-control', 'no-store')
      .header('content-language', translator.language)
      .type('text/plain; charset=utf-8')
      .send(translator.translate(msg('The sign-in could not be completed: start it again from the application.')));
  };
}
