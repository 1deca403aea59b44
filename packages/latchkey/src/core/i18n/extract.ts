/**
 * Finds the message ids in source files, for `makemessages` (docs/translations.md). It reads the
 * forms the code and templates are written in, and only those, so a message written another way
 * is reported rather than silently left out:
 *
 *   templates    _("…"), ngettext("…", "…", n), pgettext("context", "…")
 *   TypeScript   msg('…'), msgid('…'), nmsg('…', '…', n), pmsg('context', '…'),
 *                and the message of `new LatchkeyError(code, '…')`
 *
 * A message is a string literal (single or double quotes, or a backtick string without `${}`).
 * The messages of `configuration_invalid` and `database_unavailable` errors are for operators
 * (start-up, the CLI) and stay in English; every other error message that is not a literal or a
 * marked message is reported as a problem, as a template literal with substitutions anywhere.
 */

export interface ExtractedMessage {
  readonly id: string;
  readonly plural?: string;
  readonly context?: string;
  /** The file it was found in, relative to the extraction's root. */
  readonly file: string;
}

export interface Extraction {
  readonly messages: ExtractedMessage[];
  /** Places a visible message is written in a form the catalogs cannot hold: `file: reason`. */
  readonly problems: string[];
}

/** Error codes whose messages are for operators, not for the people using the site. */
const OPERATOR_CODES = new Set(['configuration_invalid', 'database_unavailable']);

/** A string literal starting at `start` (at its quote): its value and where it ends, or undefined. */
function readStringLiteral(text: string, start: number): { value: string; end: number; substituted: boolean } | undefined {
  const quote = text[start];
  if (quote !== '"' && quote !== "'" && quote !== '`') return undefined;
  let value = '';
  let substituted = false;
  for (let index = start + 1; index < text.length; index++) {
    const char = text[index] as string;
    if (char === quote) return { value, end: index + 1, substituted };
    if (quote === '`' && char === '$' && text[index + 1] === '{') substituted = true;
    if (char === '\\') {
      const next = text[index + 1] ?? '';
      const escapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '`': '`' };
      if (next === 'u' && text[index + 2] === '{') {
        const close = text.indexOf('}', index);
        value += String.fromCodePoint(parseInt(text.slice(index + 3, close), 16));
        index = close;
      } else if (next === 'u') {
        value += String.fromCharCode(parseInt(text.slice(index + 2, index + 6), 16));
        index += 5;
      } else {
        value += escapes[next] ?? next;
        index += 1;
      }
      continue;
    }
    value += char;
  }
  return undefined;
}

/** Skips whitespace and comments from `index`. */
function skipSpace(text: string, index: number): number {
  for (;;) {
    while (index < text.length && /\s/.test(text[index] as string)) index++;
    if (text.startsWith('//', index)) index = text.indexOf('\n', index) === -1 ? text.length : text.indexOf('\n', index);
    else if (text.startsWith('/*', index)) index = text.indexOf('*/', index) + 2;
    else return index;
  }
}

/** `count` string-literal arguments after an opening parenthesis at `open`, or why not. */
function literalArguments(text: string, open: number, count: number): { values: string[] } | { problem: string } {
  const values: string[] = [];
  let index = open + 1;
  for (let argument = 0; argument < count; argument++) {
    index = skipSpace(text, index);
    const literal = readStringLiteral(text, index);
    if (literal === undefined) return { problem: 'its message is not a string literal' };
    if (literal.substituted) return { problem: 'its message is a template literal with ${}: use {name} placeholders and params' };
    values.push(literal.value);
    index = skipSpace(text, literal.end);
    if (argument < count - 1) {
      if (text[index] !== ',') return { problem: 'its message is not a string literal' };
      index++;
    }
  }
  return { values };
}

const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/**
 * Whether the call at `index` is on a line marked `makemessages: passes a message on`: code that
 * wraps a message it was given (LatchkeyError's constructor), whose own argument is not one.
 */
function passesMessageOn(text: string, index: number): boolean {
  const start = text.lastIndexOf('\n', index) + 1;
  const end = text.indexOf('\n', index);
  return text.slice(start, end === -1 ? undefined : end).includes(PASS_ON_MARK);
}

const PASS_ON_MARK = 'makemessages: passes a message on';

interface CallForm {
  pattern: RegExp;
  /** How many leading literal arguments, and which is what. */
  read: (values: string[]) => Omit<ExtractedMessage, 'file'>;
  count: number;
}

const TEMPLATE_FORMS: CallForm[] = [
  { pattern: /(?<![\w.])_\(/g, count: 1, read: ([id]) => ({ id: id! }) },
  { pattern: /(?<![\w.])ngettext\(/g, count: 2, read: ([id, plural]) => ({ id: id!, plural: plural! }) },
  { pattern: /(?<![\w.])pgettext\(/g, count: 2, read: ([context, id]) => ({ id: id!, context: context! }) },
];

const CODE_FORMS: CallForm[] = [
  { pattern: /(?<![\w.]|function )msg\(/g, count: 1, read: ([id]) => ({ id: id! }) },
  { pattern: /(?<![\w.]|function )msgid\(/g, count: 1, read: ([id]) => ({ id: id! }) },
  { pattern: /(?<![\w.]|function )nmsg\(/g, count: 2, read: ([id, plural]) => ({ id: id!, plural: plural! }) },
  { pattern: /(?<![\w.]|function )pmsg\(/g, count: 2, read: ([context, id]) => ({ id: id!, context: context! }) },
];

function extractCalls(text: string, file: string, forms: CallForm[], strict: boolean, into: Extraction, original = text): void {
  for (const form of forms) {
    for (const match of text.matchAll(form.pattern)) {
      const open = (match.index ?? 0) + match[0].length - 1;
      const read = literalArguments(text, open, form.count);
      if ('values' in read) into.messages.push({ ...form.read(read.values), file });
      // In a template, `_(title)` translates a value the code marked: nothing to extract there.
      else if (strict && !passesMessageOn(original, open)) into.problems.push(`${file}:${lineOf(text, open)}: ${match[0]}…) ${read.problem}`);
    }
  }
}

/** The message ids of a Nunjucks template. */
export function extractFromTemplate(text: string, file: string, into: Extraction): void {
  // Template comments may show examples; they are never rendered.
  const rendered = text.replace(/\{#[\s\S]*?#\}/g, (comment) => comment.replace(/[^\n]/g, ' '));
  extractCalls(rendered, file, TEMPLATE_FORMS, false, into);
}

/** The message ids of a TypeScript or JavaScript file, and the error messages that are not extractable. */
export function extractFromCode(text: string, file: string, into: Extraction): void {
  // Comments show examples (`msg('…')` in a doc comment); strings are left as they are.
  const code = text.replace(/\/\*[\s\S]*?\*\/|(?<![:'"`\\])\/\/[^\n]*/g, (comment) => comment.replace(/[^\n]/g, ' '));
  extractCalls(code, file, CODE_FORMS, true, into, text);
  for (const match of code.matchAll(/new LatchkeyError\(\s*'([a-z_]+)'\s*,\s*/g)) {
    if (OPERATOR_CODES.has(match[1] as string)) continue;
    const start = (match.index ?? 0) + match[0].length;
    const literal = readStringLiteral(code, start);
    if (literal === undefined) continue; // a msg() constant or call, found above, or a Message passed on
    if (literal.substituted) into.problems.push(`${file}:${lineOf(code, start)}: a ${match[1]} error's message is a template literal with \${}: use {name} placeholders and params`);
    else into.messages.push({ id: literal.value, file });
  }
}
