import { CSRF_FORM_FIELD } from './csrf.js';
import { bodyObject, hasNul } from './input.js';

/**
 * What a person sent to sign up, as the adapter's saveUser reads it (SignupSubmission.fields):
 * every field of the form or JSON body as sent, so that a field a project added to its signup
 * template reaches its hook, but never a password (any field whose name holds "password") nor
 * the CSRF token, which the hook has no business seeing. A shallow, frozen copy: the hook cannot
 * change what the door itself reads.
 */
export function submittedFields(body: unknown): Readonly<Record<string, unknown>> {
  const kept = Object.entries(bodyObject(body)).filter(([name]) => !/password/i.test(name) && name !== CSRF_FORM_FIELD);
  return Object.freeze(Object.fromEntries(kept));
}

/**
 * What a refused signup form shows again: the text fields submittedFields keeps (a project's own
 * among them, for its template), never a password; the page sets its own fields over them.
 */
export function typedAgain(body: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(submittedFields(body)).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && !hasNul(entry[1])));
}
