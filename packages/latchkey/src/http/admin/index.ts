import type { FastifyInstance } from 'fastify';
import type { HttpContext } from '../kit/context.js';
import type { AdminOptions } from './options.js';
import { registerApiTokenAdmin } from './api-tokens.js';
import { registerAuditTrailAdmin } from './audit-trail.js';
import { registerAuthenticatorAdmin } from './authenticators.js';
import { registerEmailAddressAdmin } from './email-addresses.js';
import { registerAdminHome } from './home.js';
import { registerAdminLogin } from './login.js';
import { registerSessionAdmin } from './sessions.js';
import { registerSocialAccountAdmin } from './social-accounts.js';
import { registerSocialAppAdmin } from './social-apps.js';
import { registerSocialTokenAdmin } from './social-tokens.js';
import { registerUserChangeAdmin } from './user-change.js';
import { registerUserAdmin } from './users.js';

/**
 * The admin area at ADMIN_URL (Django admin's URL scheme): only active staff get in, each page
 * checks the staff member's permission for its model (admin/access.ts), and every form carries the
 * CSRF token of Latchkey's scope. It finishes logins and reauthenticates through the account pages,
 * so it is served with them (never under HEADLESS_ONLY).
 */
export function registerAdmin(scope: FastifyInstance, ctx: HttpContext, options: AdminOptions): void {
  registerAdminLogin(scope, ctx);
  registerAdminHome(scope, ctx, options);
  registerUserAdmin(scope, ctx);
  registerUserChangeAdmin(scope, ctx);
  registerEmailAddressAdmin(scope, ctx);
  registerSocialAppAdmin(scope, ctx);
  registerSocialAccountAdmin(scope, ctx);
  registerSocialTokenAdmin(scope, ctx);
  if (options.apiTokens) registerApiTokenAdmin(scope, ctx);
  registerAuthenticatorAdmin(scope, ctx);
  registerSessionAdmin(scope, ctx);
  registerAuditTrailAdmin(scope, ctx);
}
