/**
 * A visible string that is translated where it is shown, not where it is written (Django's
 * gettext_lazy): a flow or a page handler names the message in English, with its placeholders,
 * and the door that shows it (a page, the headless API, a mail) renders it in the reader's
 * language. The English text is the message id of the gettext catalogs (docs/translations.md).
 */

/** Values for a message's `{name}` placeholders. */
export type MessageParams = Readonly<Record<string, string | number>>;

/** A message to translate where it is shown: what msg(), nmsg() and pmsg() make (docs/translations.md). */
export interface Message {
  /** The English text and catalog id, with `{name}` placeholders (python-brace-format). */
  readonly id: string;
  /** The English plural, for a message that depends on a count (ngettext). */
  readonly plural?: string;
  /** The count that chooses the plural form; also the `{count}` placeholder. */
  readonly count?: number;
  /** gettext's msgctxt: tells apart two messages with the same English text ("Email" the field, "Email" the page). */
  readonly context?: string;
  readonly params?: MessageParams;
}

/**
 * Marks `id` as a message to translate where it is shown. `npm run makemessages` finds every call
 * by its name, so the id must be a string literal: placeholders carry what changes.
 */
export function msg(id: string, params?: MessageParams): Message {
  return readable(params === undefined ? { id } : { id, params });
}

/**
 * Gives a message a toString() that says it in English (not enumerable, so its JSON, kept in a
 * session for a flash message, is only its data): a template written before translations, which
 * prints `{{ title }}` rather than `{{ _(title) }}`, still shows words, not "[object Object]".
 */
function readable(message: Message): Message {
  return Object.defineProperty(message, 'toString', { value: () => englishText(message), enumerable: false });
}

/**
 * Marks a message id that must stay a string where it is written (a JSON schema's declared
 * refusal), to be translated where it is shown (Django's gettext_noop): the extractor finds it.
 */
export function msgid(id: string): string {
  return id;
}

/** A message with a singular and a plural (ngettext): `nmsg('{count} session ended', '{count} sessions ended', n)`. */
export function nmsg(singular: string, plural: string, count: number, params?: MessageParams): Message {
  return readable({ id: singular, plural, count, params: { count, ...params } });
}

/** A message with a context (pgettext), for an English word with two meanings. */
export function pmsg(context: string, id: string, params?: MessageParams): Message {
  return readable(params === undefined ? { id, context } : { id, context, params });
}

export function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string';
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Fills `{name}` placeholders; one without a value stays as written, so a missing value shows instead of vanishing. */
export function interpolate(text: string, params: MessageParams | undefined): string {
  if (params === undefined || !text.includes('{')) return text;
  // A value given as undefined (a template's variable that is not set) reads as nothing, as `{{ x }}` does.
  return text.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name] ?? '') : whole));
}

/** The placeholder names a text uses, sorted: what a translation must keep (the completeness test). */
export function placeholdersOf(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1] as string))].sort();
}

/** A message's text in English, as logs and the CLI show it. */
export function englishText(message: Message): string {
  const text = message.plural !== undefined && message.count !== 1 ? message.plural : message.id;
  return interpolate(text, message.params);
}
