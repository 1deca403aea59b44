import type { HttpContext } from '../kit/context.js';

/**
 * A headless login has no "remember me" box: the browser's session cookie lasts SESSION_COOKIE_AGE
 * unless the project asks for browser-session cookies (ACCOUNT_SESSION_REMEMBER=false).
 */
export function loginOptionsOf(ctx: HttpContext): { remember: boolean; next: string } {
  return { remember: ctx.deps.settings.ACCOUNT_SESSION_REMEMBER ?? true, next: '' };
}
