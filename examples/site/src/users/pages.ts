import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isLatchkeyError, msg, refusalsOf, type Latchkey, type Message, type Translator, type User, type UserField, type UserFieldValue } from '@latchkey/core';
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
 * The answer to every lookup that is not the requester's own. It is one fixed body in the reader's
 * language (no CSRF token, no echo of the URL), so that two refusals cannot be told apart by what
 * they say.
 */
function notFoundPage(translator: Translator): string {
  const title = escapeHtml(translator.translate(msg('Not found')));
  const text = escapeHtml(translator.translate(msg('There is no page at this address.')));
  return (
    `<!doctype html>\n<html lang="${escapeHtml(translator.language)}" dir="${translator.direction}"><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body><h1>${title}</h1><p>${text}</p></body></html>\n`
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const NAME_NOT_ONE_STRING = msg('Enter the name once, as text.');

/**
 * What account/_form.html's macros draw a form from: each field's value as its input holds it, and
 * its errors (Latchkey's refusals as messages, which the page shows in the reader's language).
 */
interface ProfileForm {
  values: Record<string, string>;
  errors: Record<string, Message[]>;
}

/** One of the project's fields on the user's own page: its label and its value as words ('' for none given), in the reader's language. */
interface ShownField {
  name: string;
  label: string;
  text: string;
  /** Several lines (longtext), kept as the person wrote them. */
  multiline: boolean;
}

/**
 * A field's value as a person reads it: a choice by its label, a checkbox as Yes or No, '' for
 * nothing given. The words the project declared (a choice's label) are looked up in the catalogs,
 * as the form's are; what the person wrote is shown as it is.
 */
function shownText(field: UserField, value: UserFieldValue, translator: Translator): string {
  if (typeof value === 'boolean') return translator.translate(value ? msg('Yes') : msg('No'));
  if (value === null) return '';
  if (field.type === 'choice') {
    const label = field.choices.find(([choice]) => choice === value)?.[1];
    return label === undefined ? String(value) : translator.translate(label);
  }
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

function notFound(reply: FastifyReply, translator: Translator): FastifyReply {
  return reply
    .code(404)
    .header('cache-control', 'no-store')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(notFoundPage(translator));
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
    return latchkey.renderPage(request, reply, 'users/user_form.html', { title: msg('Update your information'), form, fields: inputs }, status);
  }

  function shownFields(user: User, translator: Translator): ShownField[] {
    const values = userFields.valuesOf(shown, user);
    return shown.map((field) => ({
      name: field.name,
      label: translator.translate(field.label),
      text: shownText(field, values[field.name] ?? null, translator),
      multiline: field.type === 'longtext',
    }));
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
      const errors: ProfileForm['errors'] = {};
      for (const refusal of refusalsOf(error)) (errors[refusal.param ?? '__all__'] ??= []).push(refusal.text);
      return renderForm(request, reply, { values: withoutNul({ name, ...typed }), errors }, 400);
    }
    await latchkey.flash(request, reply, { level: 'success', text: msg('Information successfully updated.') });
    return redirectTo(reply, userPagePath(user));
  });

  // No lookup holds a "~", so this route and the ones above can never name the same page.
  scope.get('/users/:lookup/', signedIn, async (request, reply) => {
    const user = await signedInUser(request);
    const { lookup } = request.params as { lookup: string };
    if (lookup === lookupOf(user)) {
      // The department the company IdP sent (src/users/adapters.ts), kept on the social account.
      const department = departmentOfUser(await latchkey.socialAccounts.listForUser(user));
      const fields = shownFields(user, await latchkey.translator(request));
      return latchkey.renderPage(request, reply, 'users/user_detail.html', { profile: user, department, fields });
    }
    return notFound(reply, await latchkey.translator(request));
  });
}
