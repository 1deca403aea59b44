import { remembersLogin } from '../../login/remember.js';
import type { HttpContext } from '../kit/context.js';
import type { PendingLogin } from '../kit/session-state.js';

/**
 * How the headless API settles a login. It asks no "remember me" question, so a login it begins
 * is remembered as login/remember.ts decides for a login asked nothing; a login that carries on
 * (`waiting`, stopped at a stage) keeps what was decided as it began, through whichever door.
 */
export function loginOptionsOf(ctx: HttpContext, waiting?: Pick<PendingLogin, 'remember'>): { remember: boolean; next: string } {
  return { remember: waiting?.remember ?? remembersLogin(ctx.deps.settings), next: '' };
}
