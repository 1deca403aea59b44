import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { registerMfaAuthenticationRoutes } from './mfa-authenticate.js';
import { registerMfaManagementRoutes } from './mfa-manage.js';
import { registerPasskeySignupRoutes } from './passkey-signup.js';
import { registerWebauthnAuthenticationRoutes } from './webauthn-authenticate.js';
import { registerWebauthnManagementRoutes } from './webauthn-manage.js';

/**
 * auth/2fa/*, auth/webauthn/*, account/authenticators, account/authenticators/totp,
 * account/authenticators/recovery-codes and account/authenticators/webauthn.
 */
export function registerMfaRoutes(api: FastifyInstance, ctx: HttpContext): void {
  registerMfaAuthenticationRoutes(api, ctx);
  registerWebauthnAuthenticationRoutes(api, ctx);
  registerPasskeySignupRoutes(api, ctx);
  registerMfaManagementRoutes(api, ctx);
  registerWebauthnManagementRoutes(api, ctx);
}
