import type { FastifyInstance } from 'fastify';
import { registerConfirmEmailPages } from './confirm-email.js';
import { registerEmailPages } from './email.js';
import { registerLoginPages } from './login.js';
import { registerLoginCodePages } from './login-code.js';
import { registerLoginStagePages } from './login-stage.js';
import { registerMfaAuthenticationPages } from './mfa-authenticate.js';
import { registerMfaManagementPages } from './mfa-manage.js';
import { registerWebauthnManagementPages } from './mfa-webauthn.js';
import { registerPasskeyLoginPages } from './passkey-login.js';
import { registerPasskeySignupPages } from './passkey-signup.js';
import type { HttpContext } from '../kit/context.js';
import { registerSignupPages } from './signup.js';
import { registerPasswordPages } from './password.js';
import { registerReauthenticatePages } from './reauthenticate.js';
import { registerSessionPages } from './sessions.js';
import { registerSocialAccountPages } from './socialaccount.js';
import { registerDummyAuthorizationPage } from './dummy-provider.js';
import { registerSetLanguagePage } from './set-language.js';

/** Every account page under /accounts/ (paths as allauth's, docs/accounts.md). */
export function registerAccountPages(scope: FastifyInstance, ctx: HttpContext): void {
  registerLoginPages(scope, ctx);
  // The code pages: for a login by code, and for the code ACCOUNT_LOGIN_BY_CODE_REQUIRED asks for after the password.
  if (ctx.deps.settings.ACCOUNT_LOGIN_BY_CODE_ENABLED || ctx.deps.settings.ACCOUNT_LOGIN_BY_CODE_REQUIRED !== false) registerLoginCodePages(scope, ctx);
  // The pages of the project's own login stages (account/login-stages.ts), one route for all.
  registerLoginStagePages(scope, ctx);
  registerSignupPages(scope, ctx);
  registerConfirmEmailPages(scope, ctx);
  registerEmailPages(scope, ctx);
  registerPasswordPages(scope, ctx);
  registerReauthenticatePages(scope, ctx);
  registerSessionPages(scope, ctx);
  registerMfaAuthenticationPages(scope, ctx);
  registerMfaManagementPages(scope, ctx);
  // Security keys: listed, renamed and removed whatever MFA_SUPPORTED_TYPES says now (a user must be
  // able to see and remove a key of a type since taken out); the flows refuse what is not offered.
  registerWebauthnManagementPages(scope, ctx);
  registerPasskeyLoginPages(scope, ctx);
  if (ctx.deps.settings.MFA_PASSKEY_SIGNUP_ENABLED) registerPasskeySignupPages(scope, ctx);
  registerSocialAccountPages(scope, ctx);
  // The language switch of every page and of the admin's.
  registerSetLanguagePage(scope, ctx);
  // allauth's dummy provider's stand-in authorization page: only when the project configures the
  // dummy provider, and never in production (start-up refuses the provider there too).
  const { settings } = ctx.deps;
  if (settings.ENVIRONMENT !== 'production' && Object.hasOwn(settings.SOCIALACCOUNT_PROVIDERS, 'dummy')) registerDummyAuthorizationPage(scope, { ctx });
}
