import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { sendOk } from './respond.js';

/**
 * GET config: what a front end needs to know to draw its forms. Only what exists is advertised:
 * no providers, codes or passkeys until the issues that add them.
 */
export function registerConfigRoute(api: FastifyInstance, ctx: HttpContext): void {
  const { settings } = ctx.deps;
  const methods = settings.ACCOUNT_LOGIN_METHODS;
  api.get('/config', async (request, reply) =>
    sendOk(ctx, request, reply, {
      data: {
        account: {
          authentication_method: methods.length > 1 ? 'username_email' : methods[0],
          login_methods: methods,
          is_open_for_signup: await ctx.deps.adapter.isOpenForSignup(),
          email_verification_by_code_enabled: false,
          login_by_code_enabled: false,
          password_reset_by_code_enabled: false,
        },
        mfa: { supported_types: settings.MFA_SUPPORTED_TYPES },
        usersessions: { track_activity: false },
      },
    }),
  );
}
