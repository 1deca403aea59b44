import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError } from '../../core/errors.js';
import { mfaOverview, type MfaOverview } from '../../mfa/flows/manage.js';
import { regenerateRecoveryCodes, viewRecoveryCodes } from '../../mfa/flows/recovery-codes.js';
import { activateTotp, deactivateTotp, totpSetup } from '../../mfa/flows/totp.js';
import type { Authenticator } from '../../mfa/model.js';
import type { User } from '../../account/model.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { webauthnKeyData } from './webauthn-manage.js';
import { keepPendingTotpSecret, pendingTotpSecret } from '../kit/session-state.js';
import type { HttpContext } from '../kit/context.js';
import { textField } from '../kit/input.js';
import { sendHeadlessRefusal, type RefusalOptions } from './refusals.js';
import { sendEnvelope, sendOk, sendUnauthenticated } from './respond.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

const seconds = (at: Date): number => at.getTime() / 1000;

/** When an authenticator was set up and last used, as the contract gives times: epoch seconds, null for never. */
function authenticatorTimes(authenticator: Pick<Authenticator, 'createdAt' | 'lastUsedAt'>) {
  return { created_at: seconds(authenticator.createdAt), last_used_at: authenticator.lastUsedAt ? seconds(authenticator.lastUsedAt) : null };
}

function totpData(totp: Authenticator) {
  return { type: 'totp', ...authenticatorTimes(totp) };
}

function recoveryCodesData(codes: NonNullable<MfaOverview['recoveryCodes']>) {
  return { type: 'recovery_codes', ...authenticatorTimes(codes), total_code_count: codes.total, unused_code_count: codes.unused };
}

/**
 * account/authenticators, account/authenticators/totp and account/authenticators/recovery-codes:
 * the same flows as the pages under /accounts/2fa/, which decide every rule (a verified address,
 * a recent proof of identity, what goes with what); these routes present their answers.
 */
export function registerMfaManagementRoutes(api: FastifyInstance, ctx: HttpContext): void {
  const { deps } = ctx;

  /** The signed-in user and when they last proved who they are, or the 401 for a stranger. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<{ user: User; lastAuthenticatedAt: Date | undefined } | { response: FastifyReply }> {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return { response: await sendUnauthenticated(ctx, request, reply) };
    return { user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
  }

  /**
   * The contract's answers to the management flows' refusals: nothing to show or remove is 404,
   * a factor that may not be added (one exists, the address is unverified) is 409, both bare; a
   * stale proof of identity is the 401 that lists how to prove it again (sendHeadlessRefusal).
   */
  function sendManagementRefusal(request: FastifyRequest, reply: FastifyReply, error: unknown, options?: RefusalOptions): Promise<FastifyReply> | FastifyReply {
    if (isLatchkeyError(error, 'not_found')) return sendEnvelope(ctx, request, reply, 404);
    if (isLatchkeyError(error, 'authenticator_exists') || isLatchkeyError(error, 'email_unverified')) return sendEnvelope(ctx, request, reply, 409);
    return sendHeadlessRefusal(ctx, request, reply, error, options);
  }

  api.get('/account/authenticators', {
    schema: headlessOperation('get', {
      tag: 'Account: two-factor',
      summary: 'List second factors',
      description: 'The authenticator app and the recovery codes, when set up, and each security key.',
      responses: { 200: answers.Authenticators, 401: answers.Unauthenticated },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const overview = await mfaOverview(deps, auth.user);
    const data: object[] = [];
    if (overview.totp) data.push(totpData(overview.totp));
    if (overview.recoveryCodes) data.push(recoveryCodesData(overview.recoveryCodes));
    data.push(...overview.webauthn.map(webauthnKeyData));
    return sendOk(ctx, request, reply, { data });
  });

  api.get('/account/authenticators/totp', {
    schema: headlessOperation('get', {
      tag: 'Account: two-factor',
      summary: 'Authenticator app status',
      description: 'The app when one is set up; else 404 with a new secret and its `otpauth:` URL in `meta`, the same until it is activated. 409 when the account may not add one (no verified address).',
      responses: { 200: answers.TotpAuthenticator, 401: answers.Unauthenticated, 404: answers.TotpNotSetUp, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const { totp } = await mfaOverview(deps, auth.user);
    if (totp) return sendOk(ctx, request, reply, { data: totpData(totp) });
    try {
      // The secret awaiting its first code is kept in the session (where the pages keep it), so
      // every GET until activation shows the same one, and a setup begun on a page carries on here.
      const setup = await totpSetup(deps, auth.user, await pendingTotpSecret(ctx, request));
      await keepPendingTotpSecret(ctx, request, reply, setup.pending);
      return await sendEnvelope(ctx, request, reply, 404, { meta: { secret: setup.secret, totp_url: setup.totpUrl } });
    } catch (error) {
      return await sendManagementRefusal(request, reply, error);
    }
  });

  api.post('/account/authenticators/totp', {
    schema: headlessOperation('post', {
      tag: 'Account: two-factor',
      summary: 'Activate the authenticator app',
      description: 'A code from the app proves it holds the secret. Recovery codes are made with the first second factor (`meta.recovery_codes_generated`).',
      body: bodies.Code,
      limited: true,
      responses: { 200: answers.TotpAuthenticator, 400: answers.Error, 401: answers.AuthenticationOrReauthentication, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    let result;
    try {
      result = await activateTotp(deps, { ...auth, client: clientOf(request), pending: await pendingTotpSecret(ctx, request), code: textField(request.body, 'code') ?? '' });
    } catch (error) {
      return sendManagementRefusal(request, reply, error);
    }
    await keepPendingTotpSecret(ctx, request, reply, undefined);
    // A new factor is a change of privilege: the session id or token seen before it is worthless
    // after it (an app receives its new token in meta.session_token).
    await ctx.sessions.rotate(request, reply);
    logMailFailures(request, [result.notification], 'TOTP activation notice');
    const { totp } = await mfaOverview(deps, auth.user);
    if (!totp) return sendEnvelope(ctx, request, reply, 404);
    return sendOk(ctx, request, reply, { data: totpData(totp), meta: { recovery_codes_generated: result.recoveryCodesGenerated } });
  });

  api.delete('/account/authenticators/totp', {
    schema: headlessOperation('delete', {
      tag: 'Account: two-factor',
      summary: 'Deactivate the authenticator app',
      description: 'Needs a recent proof of identity.',
      responses: { 200: answers.StatusOK, 401: answers.AuthenticationOrReauthentication, 404: answers.NotFound },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    try {
      const { notification } = await deactivateTotp(deps, { ...auth, client: clientOf(request) });
      logMailFailures(request, [notification], 'TOTP deactivation notice');
    } catch (error) {
      return sendManagementRefusal(request, reply, error);
    }
    return sendOk(ctx, request, reply);
  });

  api.get('/account/authenticators/recovery-codes', {
    schema: headlessOperation('get', {
      tag: 'Account: two-factor',
      summary: 'Show recovery codes',
      description: 'The unused codes. Needs a recent proof of identity.',
      responses: { 200: answers.RecoveryCodes, 401: answers.AuthenticationOrReauthentication, 404: answers.NotFound },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    let unused: string[];
    try {
      ({ unused } = await viewRecoveryCodes(deps, auth));
    } catch (error) {
      return sendManagementRefusal(request, reply, error);
    }
    const { recoveryCodes } = await mfaOverview(deps, auth.user);
    if (!recoveryCodes) return sendEnvelope(ctx, request, reply, 404);
    return sendOk(ctx, request, reply, { data: { ...recoveryCodesData(recoveryCodes), unused_codes: unused } });
  });

  api.post('/account/authenticators/recovery-codes', {
    schema: headlessOperation('post', {
      tag: 'Account: two-factor',
      summary: 'Make new recovery codes',
      description: 'Replaces every code with a new set; the old ones stop working.',
      responses: { 200: answers.RecoveryCodes, 400: answers.Error, 401: answers.AuthenticationOrReauthentication },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    let codes: string[];
    try {
      const regenerated = await regenerateRecoveryCodes(deps, { ...auth, client: clientOf(request) });
      logMailFailures(request, [regenerated.notification], 'recovery codes notice');
      codes = regenerated.codes;
    } catch (error) {
      // The flow's only input refusal here: no second factor for the codes to stand in for.
      return sendManagementRefusal(request, reply, error, { codes: { invalid_input: 'cannot_generate_recovery_codes' } });
    }
    const { recoveryCodes } = await mfaOverview(deps, auth.user);
    if (!recoveryCodes) return sendEnvelope(ctx, request, reply, 404);
    return sendOk(ctx, request, reply, { data: { ...recoveryCodesData(recoveryCodes), unused_codes: codes } });
  });
}
