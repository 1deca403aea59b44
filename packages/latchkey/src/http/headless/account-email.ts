import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  addEmailAddress,
  listEmailAddresses,
  makePrimaryEmailAddress,
  removeEmailAddress,
  resendEmailConfirmation,
  type ChangeEmailInput,
} from '../../account/flows/manage-email.js';
import type { User } from '../../account/model.js';
import { keepVerificationCode } from '../kit/email-code-state.js';
import { clientOf } from '../kit/request-info.js';
import type { HttpContext } from '../kit/context.js';
import { booleanField, textField } from '../kit/input.js';
import { sendHeadlessRefusal } from './refusals.js';
import { sendErrors, sendOk, sendUnauthenticated } from './respond.js';
import { answers, bodies, headlessOperation, REFUSALS } from './operation-schema.js';

/**
 * account/email: the signed-in user's addresses (GET), add one (POST), send its link again (PUT),
 * make one primary (PATCH), remove one (DELETE), over the flows of the email page. The flows decide
 * which of these need a recent authentication (the changes; not a resend); a stale session gets the
 * 401 that lists the ways to reauthenticate. Under verification by code, the code mailed for an
 * added (or resent) address is kept in this session, for auth/email/verify.
 */
export function registerAccountEmailRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;

  async function sendAddresses(request: FastifyRequest, reply: FastifyReply, user: User): Promise<FastifyReply> {
    const addresses = await listEmailAddresses(deps, user);
    const data = addresses.map((address) => ({ email: address.email, primary: address.primary, verified: address.verified }));
    return sendOk(ctx, request, reply, { data });
  }

  /**
   * Runs one change for the signed-in user (401 when there is none), answering a flow's refusal
   * in the API's shape; `work` gets what every action is given: who, which address, from where,
   * and when this session last proved who the user is.
   */
  function change(work: (input: ChangeEmailInput, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>) {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const user = await ctx.sessions.currentUser(request);
      if (!user) return sendUnauthenticated(ctx, request, reply);
      const input: ChangeEmailInput = {
        user,
        email: textField(request.body, 'email') ?? '',
        client: clientOf(request),
        lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request),
      };
      try {
        return await work(input, request, reply);
      } catch (error) {
        return sendHeadlessRefusal(ctx, request, reply, error);
      }
    };
  }

  api.get('/account/email', {
    schema: headlessOperation('get', {
      tag: 'Account: email',
      summary: 'List addresses',
      description: "The signed-in user's email addresses.",
      responses: { 200: answers.EmailAddresses, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return sendUnauthenticated(ctx, request, reply);
    return sendAddresses(request, reply, user);
  });

  api.post(
    '/account/email',
    {
      schema: headlessOperation('post', {
        tag: 'Account: email',
        summary: 'Add an address',
        description: 'Adds the address, unverified, and mails it a confirmation link. The list looks the same whether or not another account holds the address.',
        body: bodies.Email,
        limited: true,
        responses: { 200: answers.EmailAddresses, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
      }),
    },
    change(async (input, request, reply) => {
      const result = await addEmailAddress(deps, input);
      // The address is added and listed, unverified; its link can be asked for again (PUT).
      if (result.mailFailed) request.log.error('account email: the confirmation email of an added address could not be sent');
      if (result.code !== undefined) await keepVerificationCode(ctx, request, reply, { userId: input.user.id, state: result.code });
      return sendAddresses(request, reply, input.user);
    }),
  );

  api.put(
    '/account/email',
    {
      schema: headlessOperation('put', {
        tag: 'Account: email',
        summary: 'Send the confirmation link again',
        description: 'For one of the user\'s unverified addresses.',
        body: bodies.Email,
        limited: true,
        busy: true,
        responses: { 200: answers.StatusOK, 400: answers.Error, 401: answers.Unauthenticated },
      }),
    },
    change(async (input, request, reply) => {
      const resent = await resendEmailConfirmation(deps, input);
      if (resent.code !== undefined) await keepVerificationCode(ctx, request, reply, { userId: input.user.id, state: resent.code });
      return sendOk(ctx, request, reply);
    }),
  );

  api.patch(
    '/account/email',
    {
      schema: headlessOperation('patch', {
        tag: 'Account: email',
        summary: 'Make an address primary',
        description: 'Only a verified address can be primary.',
        body: bodies.MarkPrimaryEmail,
        limited: true,
        responses: { 200: answers.EmailAddresses, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
      }),
    },
    change(async (input, request, reply) => {
      // allauth's request names the one change this operation makes; anything else is not asked for.
      if (booleanField(request.body, 'primary') !== true) {
        return sendErrors(ctx, request, reply, 400, [{ ...REFUSALS.onlyPrimary, param: 'primary' }]);
      }
      await makePrimaryEmailAddress(deps, input);
      return sendAddresses(request, reply, input.user);
    }),
  );

  api.delete(
    '/account/email',
    {
      schema: headlessOperation('delete', {
        tag: 'Account: email',
        summary: 'Remove an address',
        description: 'The primary address cannot be removed while others remain.',
        body: bodies.Email,
        limited: true,
        responses: { 200: answers.EmailAddresses, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
      }),
    },
    change(async (input, request, reply) => {
      await removeEmailAddress(deps, input);
      return sendAddresses(request, reply, input.user);
    }),
  );
}
