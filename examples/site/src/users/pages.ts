import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, type Latchkey, type User } from '@latchkey/core';
import { departmentOfUser } from './adapters.js';
import { lookupOf, userPagePath } from './lookup.js';

/**
 * The project's user pages (cookiecutter-django's users views), registered inside Latchkey's
 * plugin so that they share its sessions, CSRF protection and page layout:
 *
 *   GET /users/~redirect/        where a login lands (LOGIN_REDIRECT_URL): on to the user's own page
 *   GET /users/<username>/       the signed-in user's own page
 *   GET|POST /users/~update/     a form that changes the user's name
 *
 * Every page needs a signed-in user (Latchkey's `signedIn` guard, Django's LoginRequiredMixin):
 * anyone else is sent to the login page, which returns here.
 * A person sees only their own page: every other lookup, whether it names someone or nobody, is
 * the same 404, so the pages never tell who has an account.
 */

/**
 * The answer to every lookup that is not the requester's own. It is one fixed body (no CSRF
 * token, no echo of the URL), so that two refusals cannot be told apart by what they say.
 */
const NOT_FOUND_PAGE =
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>' +
  '<body><h1>Not found</h1><p>There is no page at this address.</p></body></html>\n';

const NAME_NOT_ONE_STRING = 'Enter the name once, as text.';

interface ProfileForm {
  values: { name: string };
  errors: Record<string, string[]>;
}

/** A redirect whose target names the user, so no cache may keep it. */
function redirectTo(reply: FastifyReply, location: string): FastifyReply {
  return reply.header('cache-control', 'no-store').redirect(location, 302);
}

/** The user the `signedIn` guard let through (request.user, read once per request). */
async function signedInUser(request: FastifyRequest): Promise<User> {
  const user = await request.user;
  if (user === undefined) throw new Error('A user page ran without the signedIn guard.');
  return user;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(NOT_FOUND_PAGE);
}

/**
 * The name a form (or a JSON body) submitted: a missing field is an empty name, as a Django form
 * reads an optional field; undefined when the value is not one string (a field sent twice, a
 * number), which the page refuses rather than guess at.
 */
function submittedName(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const value = (body as Record<string, unknown>).name;
  if (value === undefined) return '';
  return typeof value === 'string' ? value : undefined;
}

export function registerUserPages(scope: FastifyInstance, latchkey: Latchkey): void {
  function renderForm(request: FastifyRequest, reply: FastifyReply, form: ProfileForm, status = 200): Promise<FastifyReply> {
    return latchkey.renderPage(request, reply, 'users/user_form.html', { title: 'Update your information', form }, status);
  }

  const signedIn = { preHandler: latchkey.guards.signedIn };

  scope.get('/users/~redirect/', signedIn, async (request, reply) => {
    return redirectTo(reply, userPagePath(await signedInUser(request)));
  });

  scope.get('/users/~update/', signedIn, async (request, reply) => {
    const user = await signedInUser(request);
    return renderForm(request, reply, { values: { name: user.name }, errors: {} });
  });

  scope.post('/users/~update/', signedIn, async (request, reply) => {
    const user = await signedInUser(request);
    const name = submittedName(request.body);
    if (name === undefined) {
      return renderForm(request, reply, { values: { name: user.name }, errors: { name: [NAME_NOT_ONE_STRING] } }, 400);
    }
    try {
      // Latchkey decides what a name may be (its length, that it is text), so this form and
      // every other way of changing a name share one rule.
      await latchkey.users.update(user, { name });
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      // Shown again as typed, less any NUL (which no person types and HTML cannot carry).
      const values = { name: name.replaceAll('\u0000', '') };
      return renderForm(request, reply, { values, errors: { [error.param ?? '__all__']: [error.message] } }, 400);
    }
    await latchkey.flash(request, reply, { level: 'success', text: 'Information successfully updated.' });
    return redirectTo(reply, userPagePath(user));
  });

  // No lookup holds a "~", so this route and the ones above can never name the same page.
  scope.get('/users/:lookup/', signedIn, async (request, reply) => {
    const user = await signedInUser(request);
    const { lookup } = request.params as { lookup: string };
    if (lookup === lookupOf(user)) {
      // The department the company IdP sent (src/users/adapters.ts), kept on the social account.
      const department = departmentOfUser(await latchkey.socialAccounts.listForUser(user));
      return latchkey.renderPage(request, reply, 'users/user_detail.html', { profile: user, department });
    }
    return notFound(reply);
  });
}
