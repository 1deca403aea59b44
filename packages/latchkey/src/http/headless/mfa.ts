import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import { registerMfaAuthenticationRoutes } from './mfa-authenticate.js';
import { registerMfaManagementRoutes } from './mfa-manage.js';

/** auth/2fa/*, account/authenticators, account/authenticators/totp and account/authenticators/recovery-codes. */
export function registerMfaRoutes(api: FastifyInstance, ctx: HttpContext): void {
  registerMfaAuthenticationRoutes(api, ctx);
  registerMfaManagementRoutes(api, ctx);
}
