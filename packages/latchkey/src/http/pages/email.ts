import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  addEmailAddress,
  listEmailAddresses,
  makePrimaryEmailAddress,
  removeEmailAddress,
  resendEmailConfirmation,
  type ChangeEmailInput,
} from '../../account/flows/manage-email.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg, type Message } from '../../core/i18n/message.js';
import type { MailedCodeState } from '../../account/mailed-codes.js';
import type { User } from '../../account/model.js';
import { emptyForm, refusalStatus, flash, formFields, formWithError, redirect, renderPage, redirectUnlessRecentlyAuthenticated, requireUser, type FormState } from './page.js';
import type { HttpContext } from '../kit/context.js';
import { keepVerificationCode } from '../kit/email-code-state.js';
import { clientOf } from '../kit/request-info.js';

/** The submit buttons of the page, by allauth's names (docs/accounts.md); the first one sent wins. */
const ACTIONS = ['action_add', 'action_send', 'action_remove', 'action_primary'] as const;
type EmailAction = (typeof ACTIONS)[number];

function chosenAction(body: unknown): EmailAction | undefined {
  const source = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  return ACTIONS.find((name) => source[name] !== undefined);
}

/**
 * What an action did: the message the page flashes, and under verification by code the code the
 * mail carried, which this browser keeps (the person types it in at the confirmation page).
 */
interface ActionOutcome {
  level: 'success' | 'info' | 'error';
  text: Message;
  code?: MailedCodeState | undefined;
}

/** What the page says once a confirmation went out: a link by mail, or under verification by code a code. */
function confirmationSent(code: MailedCodeState | undefined, email: string): Message {
  return code === undefined ? msg('Confirmation email sent to {email}.', { email }) : msg('A confirmation code sent to {email}.', { email });
}

/** What each action does, and the message the page flashes once it has. */
const PERFORM: Record<EmailAction, (ctx: HttpContext, input: ChangeEmailInput) => Promise<ActionOutcome>> = {
  async action_add(ctx, input) {
    // The same words whether the address was added or belongs to another account (see the flow).
    const result = await addEmailAddress(ctx.deps, input);
    if (result.mailFailed) return { level: 'error', text: msg('We could not send an email to {email} just now. Please try again later.', { email: result.email }) };
    return { level: 'info', text: confirmationSent(result.code, result.email), code: result.code };
  },
  async action_send(ctx, input) {
    const { address, code } = await resendEmailConfirmation(ctx.deps, input);
    return { level: 'info', text: confirmationSent(code, address.email), code };
  },
  async action_remove(ctx, input) {
    const address = await removeEmailAddress(ctx.deps, input);
    return { level: 'success', text: msg('Removed email address {email}.', { email: address.email }) };
  },
  async action_primary(ctx, input) {
    await makePrimaryEmailAddress(ctx.deps, input);
    return { level: 'success', text: msg('Primary email address set.') };
  },
};

/**
 * Email management: the user's addresses with verify/remove/primary actions, and a form to add
 * one. The flows decide which actions need a recent authentication (every change; not a resend);
 * the page turns their 'reauthentication_required' into the reauthentication page.
 */
export function registerEmailPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  async function show(request: FastifyRequest, reply: FastifyReply, user: User, forms: { add: FormState; list: FormState }, status = 200) {
    const addresses = await listEmailAddresses(ctx.deps, user);
    const max = ctx.deps.settings.ACCOUNT_MAX_EMAIL_ADDRESSES;
    return renderPage(
      ctx,
      request,
      reply,
      'account/email.html',
      { title: msg('Email addresses'), addresses, can_add: addresses.length < max, max_addresses: max, add_form: forms.add, list_form: forms.list },
      status,
    );
  }

  scope.get(urls.route('account_email'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return show(request, reply, signedIn.user, { add: emptyForm(), list: emptyForm() });
  });

  scope.post(urls.route('account_email'), async (request, reply) => {
    const signedIn = await requireUser(ctx, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const { user } = signedIn;
    const { email } = formFields(request.body, ['email']);
    const action = chosenAction(request.body);
    if (action === undefined) {
      return show(request, reply, user, { add: emptyForm(), list: { values: {}, errors: { __all__: [msg('Choose what to do with the address.')] } } }, 400);
    }
    try {
      const lastAuthenticatedAt = await ctx.sessions.lastAuthenticatedAt(request);
      const { code, ...message } = await PERFORM[action](ctx, { user, email, client: clientOf(request), lastAuthenticatedAt });
      await flash(ctx, request, reply, message);
      if (code === undefined) return redirect(reply, urls.urlFor('account_email'));
      // Verification by code: on to the page where the code is typed in.
      await keepVerificationCode(ctx, request, reply, { userId: user.id, state: code });
      return redirect(reply, urls.urlFor('account_email_verification_sent'));
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      if (error.code === 'reauthentication_required') {
        // The reply is wrapped ({response}): a Fastify reply is thenable, so a bare one returned
        // from an async function would resolve to undefined once sent.
        const stale = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
        if (stale) return stale.response;
      }
      const status = refusalStatus(reply, error);
      // The add form keeps what was typed; the list form's errors go above the list.
      const forms =
        action === 'action_add'
          ? { add: formWithError({ email }, error), list: emptyForm() }
          : { add: emptyForm(), list: { values: {}, errors: { __all__: [error.text] } } };
      return show(request, reply, user, forms, status);
    }
  });
}
