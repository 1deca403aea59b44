import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { offeredProviders, type ProviderData } from './provider-data.js';
import { sendOk } from './respond.js';
import { answers, headlessOperation } from './operation-schema.js';

/**
 * GET config: what a front end needs to know to draw its forms. Only what exists is advertised:
 * login by code and passkey login when the project turns them on. The providers are listed by
 * name; the app client is shown only those it can use, the ones that take a token (it cannot
 * follow a redirect).
 */
async function configuredProviders(ctx: HttpContext): Promise<ProviderData[]> {
  const providers = await offeredProviders(ctx);
  return ctx.client === 'app' ? providers.filter((provider) => provider.flows.includes('provider_token')) : providers;
}

export function registerConfigRoute(api: FastifyInstance, ctx: HttpContext): void {
  const { settings } = ctx.deps;
  const methods = settings.ACCOUNT_LOGIN_METHODS;
  api.get('/config', {
    schema: headlessOperation('get', {
      tag: 'Configuration',
      summary: 'Read the configuration',
      description: 'Which login methods, signup and second factors the server offers. The same for everybody: read it once when the front end starts.',
      responses: { 200: answers.Configuration },
    }),
  }, async (request, reply) =>
    sendOk(ctx, request, reply, {
      data: {
        account: {
          authentication_method: methods.length > 1 ? 'username_email' : methods[0],
          login_methods: methods,
          is_open_for_signup: await ctx.deps.adapter.isOpenForSignup(),
          email_verification_by_code_enabled: settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED,
          login_by_code_enabled: settings.ACCOUNT_LOGIN_BY_CODE_ENABLED,
          password_reset_by_code_enabled: false,
        },
        socialaccount: { providers: await configuredProviders(ctx) },
        mfa: { supported_types: settings.MFA_SUPPORTED_TYPES, passkey_login_enabled: settings.MFA_PASSKEY_LOGIN_ENABLED },
        usersessions: { track_activity: false },
      },
    }),
  );
}
