import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import { isLatchkeyError } from '../../core/errors.js';
import { msg } from '../../core/i18n/message.js';
import { removedWith } from '../../mfa/authenticators.js';
import { mfaOverview } from '../../mfa/flows/manage.js';
import { addWebauthnKey, removeWebauthnKeys, renameWebauthnKey, webauthnRegistrationOptions } from '../../mfa/flows/webauthn.js';
import type { WebauthnKey } from '../../mfa/webauthn.js';
import type { HttpContext } from '../kit/context.js';
import { clientOf, logMailFailures } from '../kit/request-info.js';
import { credentialOfField, takeWebauthnCeremony } from '../kit/webauthn-ceremony.js';
import { emptyForm, flash, formFields, formWithError, redirect, redirectUnlessRecentlyAuthenticated, refusalStatus, renderPage, requireUser, type FormState } from './page.js';
import { sendOptions, sendOptionsElsewhere, sendOptionsRefusal, wantsOptions } from './webauthn-options.js';

/** A key's id from the path: digits only, else no key at all. */
function keyIdOf(request: FastifyRequest): number | undefined {
  const { id } = request.params as { id?: string };
  return id !== undefined && /^\d{1,15}$/.test(id) ? Number(id) : undefined;
}

/**
 * The pages where a signed-in user manages their security keys and passkeys (allauth.mfa's
 * 2fa/webauthn/ paths): the list, adding one (after a recent reauthentication; the first comes
 * with recovery codes, shown next as after an authenticator app), renaming and removing one.
 * The flows decide every rule; another user's key, like a key that does not exist, is a 404.
 */
export function registerWebauthnManagementPages(scope: FastifyInstance, ctx: HttpContext): void {
  const { urls } = ctx.deps;
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<{ user: User; lastAuthenticatedAt: Date | undefined } | { response: FastifyReply }> {
    const result = await requireUser(ctx, request, reply);
    if ('response' in result) return result;
    return { user: result.user, lastAuthenticatedAt: await ctx.sessions.lastAuthenticatedAt(request) };
  }

  /** The user's key with this id (undefined for anyone else's: they are told alike that there is none). */
  async function ownKey(request: FastifyRequest, user: User): Promise<{ key: WebauthnKey; others: Awaited<ReturnType<typeof mfaOverview>> } | undefined> {
    const id = keyIdOf(request);
    const overview = await mfaOverview(ctx.deps, user);
    const key = overview.webauthn.find((candidate) => candidate.authenticator.id === id);
    return key && { key, others: overview };
  }

  scope.get(urls.route('mfa_list_webauthn'), async (request, reply) => {
    const auth = await requireUser(ctx, request, reply);
    if ('response' in auth) return auth.response;
    const overview = await mfaOverview(ctx.deps, auth.user);
    return renderPage(ctx, request, reply, 'mfa/webauthn/authenticator_list.html', {
      title: msg('Security keys'),
      can_add: overview.types.webauthn,
      keys: overview.webauthn.map((key) => ({
        id: key.authenticator.id,
        name: key.name,
        passkey: key.passwordless,
        // Dates, which the template shows with the `date` filter in the reader's language.
        created_at: key.authenticator.createdAt,
        last_used_at: key.authenticator.lastUsedAt,
      })),
    });
  });

  const showAdd = (request: FastifyRequest, reply: FastifyReply, form: FormState = emptyForm(), status = 200, unverified = false) =>
    renderPage(ctx, request, reply, 'mfa/webauthn/add_form.html', { title: msg('Add a security key'), form, unverified, passkey_login: ctx.deps.settings.MFA_PASSKEY_LOGIN_ENABLED }, status);

  /** Where a refusal the add page does not show itself leads: the reauthentication page, or the 2FA overview. */
  async function addRefusal(request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<{ response: FastifyReply } | undefined> {
    if (isLatchkeyError(error, 'reauthentication_required')) return redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (isLatchkeyError(error, 'not_found')) {
      await flash(ctx, request, reply, { level: 'info', text: error.text });
      return { response: redirect(reply, urls.urlFor('mfa_index')) };
    }
    if (isLatchkeyError(error, 'email_unverified')) return { response: await showAdd(request, reply, emptyForm(), 400, true) };
    return undefined;
  }

  scope.get(urls.route('mfa_add_webauthn'), async (request, reply) => {
    if (wantsOptions(request)) {
      // A script whose session has ended meanwhile is sent to sign in, not handed the login page as JSON.
      const user = await ctx.sessions.currentUser(request);
      if (!user) return sendOptionsElsewhere(reply, urls.urlFor('account_login', {}, { next: urls.urlFor('mfa_add_webauthn') }));
      const passwordless = (request.query as Record<string, unknown>).passwordless === 'on';
      const lastAuthenticatedAt = await ctx.sessions.lastAuthenticatedAt(request);
      try {
        return await sendOptions(ctx, request, reply, 'creation_options', await webauthnRegistrationOptions(ctx.deps, { user, lastAuthenticatedAt, passwordless }));
      } catch (error) {
        // A confirmation that has grown old while the page was open: confirm again, then back here.
        const confirmFirst = isLatchkeyError(error, 'reauthentication_required') ? urls.urlFor('account_reauthenticate', {}, { next: urls.urlFor('mfa_add_webauthn') }) : undefined;
        return sendOptionsRefusal(ctx, request, reply, error, confirmFirst);
      }
    }
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    try {
      // Whether a key may be added at all (the type offered, a verified address, a recent
      // confirmation) is the flow's to say: asking it for options is asking that. The script asks
      // again when the button is pressed.
      await webauthnRegistrationOptions(ctx.deps, { ...auth, passwordless: false });
    } catch (error) {
      const refusal = await addRefusal(request, reply, error);
      if (refusal) return refusal.response;
      throw error;
    }
    return showAdd(request, reply, emptyForm({ name: '' }));
  });

  scope.post(urls.route('mfa_add_webauthn'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const fields = formFields(request.body, ['name', 'passwordless', 'credential']);
    let result;
    try {
      const credential = credentialOfField(fields.credential) as unknown as RegistrationResponseJSON;
      const ceremony = await takeWebauthnCeremony(ctx, request, 'register');
      result = await addWebauthnKey(ctx.deps, { ...auth, client: clientOf(request), ceremony, credential, name: fields.name });
    } catch (error) {
      const refusal = await addRefusal(request, reply, error);
      if (refusal) return refusal.response;
      return showAdd(request, reply, formWithError({ name: fields.name, passwordless: fields.passwordless }, error), refusalStatus(reply, error));
    }
    // A new factor is a change of privilege, as for an authenticator app: a new session id.
    await ctx.sessions.rotate(request, reply);
    logMailFailures(request, [result.notification], 'security key notice');
    await flash(ctx, request, reply, { level: 'success', text: msg('Security key added.') });
    return redirect(reply, urls.urlFor(result.recoveryCodesGenerated ? 'mfa_view_recovery_codes' : 'mfa_list_webauthn'));
  });

  const showEdit = (request: FastifyRequest, reply: FastifyReply, keyId: number, form: FormState, status = 200) =>
    renderPage(ctx, request, reply, 'mfa/webauthn/edit_form.html', { title: msg('Rename security key'), key_id: keyId, form }, status);

  scope.get(urls.route('mfa_edit_webauthn'), async (request, reply) => {
    const auth = await requireUser(ctx, request, reply);
    if ('response' in auth) return auth.response;
    const own = await ownKey(request, auth.user);
    if (!own) return reply.callNotFound();
    // Confirm first, rather than after the new name is typed (the flow refuses without it).
    const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (reauthenticate) return reauthenticate.response;
    return showEdit(request, reply, own.key.authenticator.id, emptyForm({ name: own.key.name }));
  });

  scope.post(urls.route('mfa_edit_webauthn'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const id = keyIdOf(request);
    if (id === undefined) return reply.callNotFound();
    const { name } = formFields(request.body, ['name']);
    try {
      await renameWebauthnKey(ctx.deps, { ...auth, id, name });
    } catch (error) {
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      if (isLatchkeyError(error, 'reauthentication_required')) {
        const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
        if (reauthenticate) return reauthenticate.response;
      }
      return showEdit(request, reply, id, formWithError({ name }, error), refusalStatus(reply, error));
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('Security key renamed.') });
    return redirect(reply, urls.urlFor('mfa_list_webauthn'));
  });

  scope.get(urls.route('mfa_remove_webauthn'), async (request, reply) => {
    const auth = await requireUser(ctx, request, reply);
    if ('response' in auth) return auth.response;
    const own = await ownKey(request, auth.user);
    if (!own) return reply.callNotFound();
    const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
    if (reauthenticate) return reauthenticate.response;
    const { key, others } = own;
    const all = [...(others.totp ? [others.totp] : []), ...others.webauthn.map((each) => each.authenticator), ...(others.recoveryCodes ? [others.recoveryCodes] : [])];
    return renderPage(ctx, request, reply, 'mfa/webauthn/authenticator_confirm_delete.html', {
      title: msg('Remove security key'),
      key_id: key.authenticator.id,
      key_name: key.name,
      recovery_codes_will_go: removedWith(key.authenticator, all).length > 0,
      form: emptyForm(),
    });
  });

  scope.post(urls.route('mfa_remove_webauthn'), async (request, reply) => {
    const auth = await signedIn(request, reply);
    if ('response' in auth) return auth.response;
    const id = keyIdOf(request);
    if (id === undefined) return reply.callNotFound();
    try {
      const { notification } = await removeWebauthnKeys(ctx.deps, { ...auth, client: clientOf(request), ids: [id] });
      logMailFailures(request, [notification], 'security key removal notice');
    } catch (error) {
      if (isLatchkeyError(error, 'not_found')) return reply.callNotFound();
      if (isLatchkeyError(error, 'reauthentication_required')) {
        const reauthenticate = await redirectUnlessRecentlyAuthenticated(ctx, request, reply);
        if (reauthenticate) return reauthenticate.response;
      }
      throw error;
    }
    await flash(ctx, request, reply, { level: 'success', text: msg('Security key removed.') });
    return redirect(reply, urls.urlFor('mfa_list_webauthn'));
  });
}
