/**
 * The headless API's browser client, as a single-page app calls it: same-origin requests that
 * carry the session cookie, JSON bodies, and the CSRF cookie's value copied into X-CSRFToken on
 * every request that changes something.
 */
/* global document */

export const API_BASE = '/_allauth/browser/v1';
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The `csrftoken` cookie, read anew for each request: the server issues it on the first answer
 * and replaces it at every login, so a value kept from earlier would be refused.
 */
export function csrfToken() {
  for (const pair of document.cookie.split(';')) {
    const [name, ...value] = pair.trim().split('=');
    if (name === 'csrftoken') return decodeURIComponent(value.join('='));
  }
  return '';
}

/**
 * One call to the API. Resolves to the response's envelope (`{status, data, meta, errors}`),
 * whatever its status: the caller routes on the status, as allauth's own clients do. A network
 * failure or a body that is not JSON becomes an envelope with an error a person can read.
 *
 * @param {string} method
 * @param {string} path relative to /_allauth/browser/v1, e.g. '/auth/login'
 * @param {{ body?: unknown, headers?: Record<string, string> }} [options]
 */
export async function call(method, path, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json', ...options.headers };
  if (UNSAFE_METHODS.has(method)) headers['X-CSRFToken'] = csrfToken();
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  // A content type only with a body (as allauth's own clients do): a JSON type announcing an
  // empty body (DELETE auth/session) is a malformed request to a strict JSON parser.
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  let response;
  try {
    response = await fetch(API_BASE + path, init);
  } catch {
    return { status: 0, errors: [{ message: 'The server cannot be reached. Check your connection and try again.', code: 'network' }] };
  }
  let envelope;
  try {
    envelope = await response.json();
  } catch {
    envelope = {};
  }
  if (typeof envelope !== 'object' || envelope === null) envelope = {};
  // The HTTP status is the one to trust; the envelope repeats it.
  return { ...envelope, status: response.status };
}

/** Whether an envelope says who is signed in (200 with a user) rather than something else. */
export function isAuthenticated(envelope) {
  return envelope.status === 200 && Boolean(envelope.data?.user);
}

/** A 200 with a user or a 401 with flows: an answer about the session, for the router. */
export function isSessionAnswer(envelope) {
  return isAuthenticated(envelope) || (envelope.status === 401 && envelope.meta?.is_authenticated === false);
}

/**
 * A 401 from a signed-in session: the action needs the person to prove again who they are.
 * (A 401 without `is_authenticated` means nobody is signed in.)
 */
export function needsReauthentication(envelope) {
  return envelope.status === 401 && envelope.meta?.is_authenticated === true;
}

/** The flow a login or signup waits at (`verify_email`, `mfa_authenticate`), if any. */
export function pendingFlow(envelope) {
  if (envelope.status !== 401 || envelope.meta?.is_authenticated) return undefined;
  return (envelope.data?.flows ?? []).find((flow) => flow.is_pending === true);
}

/** The messages of an error envelope, or one general message when it carries none. */
export function errorMessages(envelope) {
  const messages = (envelope.errors ?? []).map((error) => String(error.message ?? ''));
  if (messages.length > 0) return messages;
  if (envelope.status === 403) return ['The request was refused. Reload the page and try again.'];
  if (envelope.status === 429) return ['Too many attempts. Please wait a moment and try again.'];
  return ['Something went wrong. Please try again.'];
}
