/**
 * What every server-rendered door (the account pages, the admin) needs to answer a browser: forms
 * read and shown again with their errors, flash messages kept in the session, and the page itself
 * rendered never cached, never framed, under one Content-Security-Policy.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorKind, isLatchkeyError, refusalsOf, type ErrorKind } from '../../core/errors.js';
import { RateLimitedError } from '../../core/rate-limit/index.js';
import { csrfOptionsFrom, csrfToken } from './csrf.js';
import type { HttpContext } from './context.js';
import { languageName } from '../../core/i18n/languages.js';
import type { Message } from '../../core/i18n/message.js';
import { readerTranslator } from './request-language.js';
import { safeRedirectOr } from './safe-redirect.js';
import { bodyObject, textField } from './input.js';

/** A submitted form as templates see it: the values to show again and errors by field ('__all__' for the form). */
export interface FormState {
  values: Record<string, string>;
  /** Each field's errors: messages marked with msg() (or ids), translated by the template's `_()`. */
  errors: Record<string, FormError[]>;
}

/** A form error as a template shows it through `_()`: a marked message, or a message id. */
export type FormError = Message | string;

export const emptyForm = (values: Record<string, string> = {}): FormState => ({ values, errors: {} });

/**
 * Reads the named fields of a form body as strings (kit/input.ts). A field sent twice or as a
 * non-string (a JSON array or object) reads as '', and so does text with a NUL character, so that
 * it fails validation instead of reaching a flow in a shape it does not expect.
 */
export function formFields<const N extends string>(body: unknown, names: readonly N[]): Record<N, string> {
  const source = bodyObject(body);
  const fields = {} as Record<N, string>;
  for (const name of names) fields[name] = textField(source, name) ?? '';
  return fields;
}

/** The form state for a flow's refusal: the message under its field, or under '__all__'. */
export function formWithError(values: Record<string, string>, error: unknown): FormState {
  if (!isLatchkeyError(error)) throw error;
  // Every field's refusal at once (LatchkeyFieldErrors), each under its field.
  const errors: Record<string, FormError[]> = {};
  for (const refusal of refusalsOf(error)) (errors[refusal.param ?? '__all__'] ??= []).push(refusal.text);
  return { values, errors };
}

/** A page's status for each kind of refusal (core/errors.ts): 400, everything the person can fix, unless listed. */
const PAGE_STATUS: Partial<Record<ErrorKind, number>> = { too_many: 429, unavailable: 503 };

/**
 * The status a page answers a refused form with: 429 (with Retry-After) for a rate limit, 503
 * when the server is too busy or cannot send mail just now, 400 for everything the person can fix.
 */
export function refusalStatus(reply: FastifyReply, error: unknown): number {
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
  return (isLatchkeyError(error) && PAGE_STATUS[errorKind(error)]) || 400;
}


/** A message for the next page the person sees (Django's messages framework): its level and its text. */
export interface FlashMessage {
  level: 'success' | 'info' | 'warning' | 'error';
  /** Kept untranslated in the session (a JSON-able msg()), and translated for the page that shows it. */
  text: Message | string;
}

const MESSAGES_KEY = '_messages';

/** Queues a message for the next page this browser renders (kept in the session). */
export async function flash(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, message: FlashMessage): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  const queued = Array.isArray(session.data[MESSAGES_KEY]) ? (session.data[MESSAGES_KEY] as FlashMessage[]) : [];
  await ctx.deps.sessions.saveData(session, { ...session.data, [MESSAGES_KEY]: [...queued, message].slice(-10) });
}

async function takeMessages(ctx: HttpContext, request: FastifyRequest): Promise<FlashMessage[]> {
  const session = await ctx.sessions.session(request);
  const queued = session?.data[MESSAGES_KEY];
  if (!session || !Array.isArray(queued) || queued.length === 0) return [];
  const { [MESSAGES_KEY]: _taken, ...rest } = session.data;
  await ctx.deps.sessions.saveData(session, rest);
  return queued as FlashMessage[];
}

/**
 * Renders an account page. Account pages carry personal data and CSRF tokens, so none is ever
 * cached or framed; the base context gives every template the user, the site name, a CSRF token,
 * whether signup is open (for the sign-up link) and the queued messages.
 */
export async function renderPage(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  template: string,
  context: Record<string, unknown>,
  status = 200,
  /** Origins the page's forms may lead to besides this site (a provider's sign-in, through our redirect). */
  formTargets: readonly string[] = [],
): Promise<FastifyReply> {
  const { settings, adapter } = ctx.deps;
  const user = await ctx.sessions.currentUser(request);
  const translator = readerTranslator(ctx.deps, request, user);
  const messages = (await takeMessages(ctx, request)).map((message) => ({ level: message.level, text: translator.translate(message.text) }));
  const html = ctx.deps.templates.render(
    template,
    {
      site_name: settings.SITE_NAME,
      user,
      csrf_token: csrfToken(request, reply, csrfOptionsFrom(settings)),
      signup_open: await adapter.isOpenForSignup(),
      messages,
      request_path: request.url,
      // Where the language switch comes back to: this page, with only a `next` it may keep.
      language_next: switchBackPath(ctx, request),
      // The language switch (base.html): every offered language, in its own name.
      language_choices: languageChoices(ctx.deps),
      ...context,
    },
    translator,
  );
  return reply
    .header('content-language', translator.language)
    .code(status)
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    // form-action also governs where a submitted form's redirects may go (a provider's sign-in).
    .header('content-security-policy', `default-src 'self'; frame-ancestors 'none'; form-action ${["'self'", ...formTargets].join(' ')}; base-uri 'none'`)
    .type('text/html; charset=utf-8')
    .send(html);
}

/**
 * The page the language switch returns to: this page's path, and its `next` when that is a target
 * the page would follow (a login page's). Nothing else of the query is copied into the form, so a
 * crafted link cannot put its own text into every page it opens.
 */
function switchBackPath(ctx: HttpContext, request: FastifyRequest): string {
  const url = new URL(request.url, 'http://path.invalid');
  const next = url.searchParams.get('next');
  const kept = next === null ? undefined : safeRedirectOr(next, undefined);
  return kept === undefined ? url.pathname : `${url.pathname}?${new URLSearchParams({ next: kept }).toString()}`;
}

/** The offered languages as the switch lists them, each named in itself ("Deutsch", "日本語"). */
type LanguageChoices = readonly { code: string; name: string }[];

/** Worked out once per list of languages: naming a language costs an Intl.DisplayNames, too much for every page. */
const languageChoicesOf = new WeakMap<readonly string[], LanguageChoices>();

function languageChoices(deps: HttpContext['deps']): LanguageChoices {
  const languages = deps.settings.LANGUAGES;
  let choices = languageChoicesOf.get(languages);
  if (choices === undefined) {
    choices = languages.map((code) => ({ code, name: languageName(code) }));
    languageChoicesOf.set(languages, choices);
  }
  return choices;
}

export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).header('cache-control', 'no-store').redirect(location);
}
