import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { reauthenticate } from '../../account/flows/reauthenticate.js';
import { safeRedirectOr } from '../safe-redirect.js';
import { clientOf, emptyForm, refusalStatus, formFields, formWithError, redirect, renderPage, requireUser, type FormState, type PageDeps } from './page.js';

const REAUTHENTICATED_REDIRECT = '/';

/**
 * `/accounts/reauthenticate/?next=...`: the password again, then back to where the person was.
 * `next` is followed only for same-site relative paths, read from the query on GET and from the
 * form on POST, and checked both times.
 */
export function registerReauthenticatePages(scope: FastifyInstance, page: PageDeps): void {
  const form = (request: FastifyRequest, reply: FastifyReply, next: string, state: FormState = emptyForm(), status = 200) =>
    renderPage(page, request, reply, 'account/reauthenticate.html', { title: 'Confirm access', form: state, next }, status);

  scope.get('/accounts/reauthenticate/', async (request, reply) => {
    const signedIn = await requireUser(page, request, reply);
    if ('response' in signedIn) return signedIn.response;
    return form(request, reply, safeRedirectOr((request.query as Record<string, unknown>).next, ''));
  });

  scope.post('/accounts/reauthenticate/', async (request, reply) => {
    const signedIn = await requireUser(page, request, reply);
    if ('response' in signedIn) return signedIn.response;
    const fields = formFields(request.body, ['password', 'next']);
    const next = safeRedirectOr(fields.next, '');
    try {
      await reauthenticate(page.deps, { user: signedIn.user, password: fields.password, client: clientOf(request) });
    } catch (error) {
      return form(request, reply, next, formWithError({}, error), refusalStatus(reply, error));
    }
    await page.sessions.markReauthenticated(request);
    return redirect(reply, next || REAUTHENTICATED_REDIRECT);
  });
}
