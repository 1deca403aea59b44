import type { FastifyReply, FastifyRequest } from 'fastify';
import { msg } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { stagePagePath } from '../kit/stage-pages.js';
import type { SignupOutcome } from '../kit/session-state.js';
import { flash, redirect, renderPage } from './page.js';

/**
 * How the pages present what became of a login (kit/session-state.ts settleLogin), wherever it
 * began: the login form, the code page, a signup, a confirmation link. A stopped login goes to its
 * stage's page; a completed one to `next` (or the adapter's getLoginRedirectUrl) with a message.
 */
export async function presentLogin(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, outcome: SignupOutcome, next: string): Promise<FastifyReply> {
  const { urls, adapter } = ctx.deps;
  switch (outcome.kind) {
    case 'verification_sent':
      return redirect(reply, urls.urlFor('account_email_verification_sent'));
    case 'inactive':
      // allauth's respond_user_inactive: the adapter says where (the account_inactive page by default).
      return redirect(reply, adapter.getInactiveAccountUrl());
    case 'ended':
      return redirect(reply, urls.urlFor('account_login'));
    case 'stopped': {
      const page = stagePagePath(ctx, outcome.stage);
      if (page !== undefined) return redirect(reply, page);
      return renderPage(ctx, request, reply, 'account/verification_sent.html', { title: msg('Verify your email address') });
    }
    case 'signed_in':
      await flash(ctx, request, reply, { level: 'success', text: msg('Successfully signed in as {name}.', { name: outcome.user.username ?? outcome.user.email }) });
      return redirect(reply, redirectTargetOr(adapter, next, adapter.getLoginRedirectUrl(outcome.user)));
  }
}
