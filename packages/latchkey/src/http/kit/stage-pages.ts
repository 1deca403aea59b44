import type { LoginStage } from '../../login/stages.js';
import type { HttpContext } from './context.js';

/**
 * The page where a browser carries on a login stopped at `stage`, through whichever door it began
 * (the account pages, the admin's login, a provider): undefined only for verify_email by link,
 * where the login waits for the mailed link and the door says so in place.
 */
export function stagePagePath(ctx: HttpContext, stage: LoginStage): string | undefined {
  switch (stage) {
    case 'login_by_code':
      return ctx.deps.urls.urlFor('account_confirm_login_code');
    case 'mfa_signup_webauthn':
      return ctx.deps.urls.urlFor('mfa_signup_webauthn');
    case 'verify_email':
      // Under verification by code the confirmation page takes the code this login holds.
      return ctx.deps.settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED ? ctx.deps.urls.urlFor('account_email_verification_sent') : undefined;
    case 'mfa_authenticate':
    case 'mfa_trust':
      // The pages answer "trust this browser?" on the code page itself, so they stop there for both.
      return ctx.deps.urls.urlFor('mfa_authenticate');
    default:
      // A stage of the project's own (account/login-stages.ts).
      return ctx.deps.urls.urlFor('account_login_stage', { id: stage });
  }
}
