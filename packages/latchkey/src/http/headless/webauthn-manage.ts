import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { isLatchkeyError, LatchkeyError } from '../../core/errors.js';
import { addWebauthnKey, removeWebauthnKeys, renameWebauthnKey, webauthnRegistrationOptions } from '../../mfa/flows/webauthn.js';
import { webauthnKey, type WebauthnKey } from '../../mfa/webauthn.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject, integerListField, textField } from '../kit/input.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { sendHeadlessRefusal } from './refusals.js';
import { sendEnvelope, sendOk, sendUnauthenticated } from './respond.js';
import { registrationAnswer, sendWebauthnOptions, webauthnSupported } from './webauthn-kit.js';
import { answers, bodies, headlessOperation } from './operation-schema.js';

const seconds = (at: Date): number => at.getTime() / 1000;

/** A key as the contract lists it (WebAuthnAuthenticator): its id for renaming and removing, its name, whether it is a passkey. */
export function webauthnKeyData(key: WebauthnKey) {
  const { authenticator } = key;
  return {
    type: 'webauthn',
    id: authenticator.id,
    name: key.name,
    is_passwordless: key.passwordless,
    created_at: seconds(authenticator.createdAt),
    last_used_at: authenticator.lastUsedAt ? seconds(authenticator.lastUsedAt) : null,
  };
}

/**
 * account/authenticators/webauthn: the options for a new key (GET, `?passwordless` for a passkey:
 * present at all, whatever its value, as allauth reads it), adding it (POST), renaming (PUT) and
 * removing keys (DELETE), over the flows the pages call. Registered only where the project offers
 * security keys.
 *
 * As allauth's: an account that may not add a key (no verified address) is 409 before anything
 * else; every change, and the options for a new key, need a recent proof of identity (401 with the
 * ways to give one). A key that is not the user's reads as no key (404).
 */
export function registerWebauthnManagementRoutes(api: FastifyInstance, ctx: HttpContext): void {
  if (!webauthnSupported(ctx)) return;
  const { deps } = ctx;
  const PATH = '/account/authenticators/webauthn';

  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<{ user: User; lastAuthenticatedAt: Date | undefined } | { response: FastifyReply }> {
    const user = await ctx.sessions.currentUser(request);
    if (!user) return { response: await sendUnauthenticated(ctx, request, reply) };
    return { user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
  }

  function refuse(request: FastifyRequest, reply: FastifyReply, error: unknown) {
    if (isLatchkeyError(error, 'not_found')) return sendEnvelope(ctx, request, reply, 404);
    if (isLatchkeyError(error, 'email_unverified')) return sendEnvelope(ctx, request, reply, 409);
    return sendHeadlessRefusal(ctx, request, reply, error);
  }

  api.get(PATH, {
    schema: headlessOperation('get', {
      tag: 'Account: two-factor',
      summary: 'Options for a new security key',
      description: 'Creation options for `navigator.credentials.create()`; with `?passwordless` (present at all) a passkey: discoverable, verifying the person. Needs a recent proof of identity (401) and a verified address (409).',
      parameters: ['Passwordless'],
      responses: { 200: answers.WebAuthnCreationOptions, 401: answers.AuthenticationOrReauthentication, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const passwordless = Object.hasOwn(request.query as object, 'passwordless');
    try {
      return await sendWebauthnOptions(ctx, request, reply, 'creation_options', await webauthnRegistrationOptions(deps, { ...auth, passwordless }));
    } catch (error) {
      return refuse(request, reply, error);
    }
  });

  api.post(PATH, {
    schema: headlessOperation('post', {
      tag: 'Account: two-factor',
      summary: 'Add a security key',
      description: 'The browser\'s new credential (and a name). Recovery codes are made with the first second factor (`meta.recovery_codes_generated`); the session gets a new id or token.',
      body: bodies.AddWebAuthnAuthenticator,
      responses: { 200: answers.AddedWebAuthnAuthenticator, 400: answers.Error, 401: answers.AuthenticationOrReauthentication, 409: answers.Conflict },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    let result;
    try {
      result = await addWebauthnKey(deps, { ...auth, ...(await registrationAnswer(ctx, request)), client: clientOf(request) });
    } catch (error) {
      return refuse(request, reply, error);
    }
    // A new factor is a change of privilege, as for an authenticator app: a new session id or token.
    await ctx.sessions.rotate(request, reply);
    logMailFailures(request, [result.notification], 'security key notice');
    const key = webauthnKey(result.authenticator);
    if (!key) return sendEnvelope(ctx, request, reply, 404);
    return sendOk(ctx, request, reply, { data: webauthnKeyData(key), meta: { recovery_codes_generated: result.recoveryCodesGenerated } });
  });

  api.put(PATH, {
    schema: headlessOperation('put', {
      tag: 'Account: two-factor',
      summary: 'Rename a security key',
      description: 'By its id, as listed; needs a recent proof of identity. A key that is not the user\'s is 404.',
      body: bodies.UpdateWebAuthn,
      responses: { 200: answers.WebAuthnAuthenticator, 400: answers.Error, 401: answers.AuthenticationOrReauthentication, 404: answers.NotFound },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const id = bodyObject(request.body).id;
    try {
      if (!Number.isSafeInteger(id)) throw new LatchkeyError('invalid_input', 'Choose a security key.', { param: 'id' });
      const key = await renameWebauthnKey(deps, { ...auth, id: id as number, name: textField(request.body, 'name') ?? '' });
      return await sendOk(ctx, request, reply, { data: webauthnKeyData(key) });
    } catch (error) {
      return refuse(request, reply, error);
    }
  });

  api.delete(PATH, {
    schema: headlessOperation('delete', {
      tag: 'Account: two-factor',
      summary: 'Remove security keys',
      description: 'By their ids, all or none (404 when one is not the user\'s); the recovery codes go too when no other second factor remains. Needs a recent proof of identity.',
      body: bodies.DeleteWebAuthn,
      responses: { 200: answers.StatusOK, 400: answers.Error, 401: answers.AuthenticationOrReauthentication, 404: answers.NotFound },
    }),
  }, async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const ids = integerListField(request.body, 'authenticators');
    try {
      if (ids === undefined) throw new LatchkeyError('invalid_input', 'Choose a security key to remove.', { param: 'authenticators' });
      const { notification } = await removeWebauthnKeys(deps, { ...auth, ids, client: clientOf(request) });
      logMailFailures(request, [notification], 'security key removal notice');
    } catch (error) {
      return refuse(request, reply, error);
    }
    return sendOk(ctx, request, reply);
  });
}
