import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, refusalsOf, type Latchkey, type User, type UserField, type UserFieldValue } from '@latchkey/core';
import { departmentOfUser } from './adapters.js';
import { lookupOf, userPagePath } from './lookup.js';

/**
 * The project's user pages (cookiecutter-django's users views), registered inside Latchkey's
 * plugin so that they share its sessions, CSRF protection and page layout:
 *
 *   GET /users/~redirect/        where a login lands (LOGIN_REDIRECT_URL): on to the user's own page
 *   GET /users/<username>/       the signed-in user's own page
 *   GET|POST /users/~update/     a form that changes the user's name and their editable fields
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

/** What account/_form.html's macros draw a form from: each field's value as its input holds it, and its errors. */
interface ProfileForm {
  values: Record<string, string>;
  errors: Record<string, string[]>;
}

/** One of the project's fields on the user's own page: its label and its value as words ('' for none given). */
interface ShownField {
  name: string;
  label: string;
  text: string;
  /** Several lines (longtext), kept as the person wrote them. */
  multiline: boolean;
}

/** A field's value as a person reads it: a choice by its label, a checkbox as Yes or No, '' for nothing given. */
function shownText(field: UserField, value: UserFieldValue): string {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (value === null) return '';
  if (field.type === 'choice') return field.choices.find(([choice]) => choice === value)?.[1] ?? String(value);
  return String(value);
}

/** Form values as a page can carry them: a NUL, which no person types and HTML cannot hold, is dropped. */
function withoutNul(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, value.replaceAll('\u0000', '')]));
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
  // The project's own fields (src/users/fields.ts): the form asks those a person may change
  // (`editable`); their page shows those and the ones the API gives them (`api`), never a field
  // kept for staff alone. node_modules/@latchkey/core/docs/user-fields.md.
  const { userFields } = latchkey;
  const editable = userFields.editable;
  const inputs = userFields.inputs(editable);
  const shown = userFields.all.filter((field) => field.editable || field.api);

  function renderForm(request: FastifyRequest, reply: FastifyReply, form: ProfileForm, status = 200): Promise<FastifyReply> {
    return latchkey.renderPage(request, reply, 'users/user_form.html', { title: 'Update your information', form, fields: inputs }, status);
  }

  function shownFields(user: User): ShownField[] {
    const values = userFields.valuesOf(shown, user);
    return shown.map((field) => ({ name: field.name, label: field.label, text: shownText(field, values[field.name] ?? null), multiline: field.type === 'longtext' }));
  }

  const signedIn = { preHandler: latchkey.guards.signedIn };

  scope.get('/users/~redirect/', signedIn, async (request, reply) => {
    return redirectTo(reply, userPagePath(await signedInUser(request)));
  });

  scope.get('/users/~update/', signedIn, async (request, reply) => {
    const user = await signedInUser(request);
    return renderForm(request, reply, { values: { name: user.name, ...userFields.formValues(editable, user) }, errors: {} });
  });

  scope.post('/users/~update/', signedIn, async (request, reply) => {
    const user = await signedInUser(request);
    const name = submittedName(request.body);
    // Each editable field as it was sent (an unchecked box is false), judged below by its rules.
    const sent = userFields.fromForm(editable, request.body);
    // What was typed comes back with the errors, so that it can be corrected rather than typed again.
    const typed = withoutNul(userFields.formValues(editable, sent));
    if (name === undefined) {
      // No browser sends this form so: it is refused as a whole, and nothing is judged or saved.
      return renderForm(request, reply, { values: { name: user.name, ...typed }, errors: { name: [NAME_NOT_ONE_STRING] } }, 400);
    }
    try {
      // Latchkey decides what a name and each field may be (a name's length, a field's declared
      // rules), so this form and every other way of changing them share one rule; it refuses
      // every bad value at once, and then saves nothing.
      await latchkey.users.update(user, { name, ...sent });
    } catch (error) {
      if (!isLatchkeyError(error)) throw error;
      const errors: Record<string, string[]> = {};
      for (const refusal of refusalsOf(error)) (errors[refusal.param ?? '__all__'] ??= []).push(refusal.message);
      return renderForm(request, reply, { values: withoutNul({ name, ...typed }), errors }, 400);
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
      return latchkey.renderPage(request, reply, 'users/user_detail.html', { profile: user, department, fields: shownFields(user) });
    }
    return notFound(reply);
  });
}
