import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { reauthenticate } from '../../account/flows/reauthenticate.js';
import { hasMfaEnabled } from '../../mfa/authenticators.js';
import { listWebauthnKeys } from '../../mfa/flows/webauthn.js';
import { msg } from '../../core/i18n/message.js';
import type { User } from '../../account/model.js';
import { passwordRecord } from '../kit/authentication-records.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { emptyForm, refusalStatus, formFields, formWithError, redirect, renderPage, requireUser, type FormState } from './page.js';
import type { HttpContext } from '../kit/context.js';
import { clientOf } from '../kit/request-info.js';

const REAUTHENTICATED_REDIRECT = '/';

/**
 * The reauthentication page (account_reauthenticate, `?next=...`): the password again, then back to where the person was.
 * `next` is followed only for same-site relative paths, read from the query on GET and from the
 * form on POST, and checked both times.
 */
export function registerReauthenticatePages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  const form = async (request: FastifyRequest, reply: FastifyReply, user: User, next: string, state: FormState = emptyForm(), status = 200) => {
    // A user with a second factor may confirm with it instead (2fa/reauthenticate/): a code, or a security key.
    const withSecondFactor = await hasMfaEnabled(ctx.deps, user.id);
    const mfaReauthenticateUrl = withSecondFactor ? urls.urlFor('mfa_reauthenticate', {}, next ? { next } : {}) : undefined;
    const withKey = withSecondFactor && (await listWebauthnKeys(ctx.deps, user)).length > 0;
    return renderPage(ctx, request, reply, 'account/reauthenticate.html', { title: msg('Confirm access'), form: state, next, mfa_reauthenticate_url: mfaReauthenticateUrl, mfa_security_key: withKey }, status);
  };

  scope.get(urls.route('account_reauthenticate'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return form(request, reply, signedIn.user, redirectTargetOr(ctx.deps.adapter, (request.query as Record<string, unknown>).next, ''));
  });

  scope.post(urls.route('account_reauthenticate'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const fields = formFields(request.body, ['password', 'next']);
    const next = redirectTargetOr(ctx.deps.adapter, fields.next, '');
    try {
      await reauthenticate(ctx.deps, { user: signedIn.user, password: fields.password, client: clientOf(request) });
    } catch (error) {
      return form(request, reply, signedIn.user, next, formWithError({}, error), refusalStatus(reply, error));
    }
    await ctx.sessions.markReauthenticated(request, passwordRecord(ctx.deps.settings, signedIn.user, ctx.deps.clock.now()));
    return redirect(reply, next || REAUTHENTICATED_REDIRECT);
  });
}
