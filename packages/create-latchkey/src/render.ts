/**
 * The template language of the project files: plain text with two kinds of marker, chosen so that
 * they never collide with the TypeScript, HTML and Nunjucks they sit in.
 *
 * - `%%name%%` is replaced by a value (`%%project_name%%`).
 * - A line holding only `%% if CONDITION %%`, `%% else %%` or `%% endif %%` keeps or drops the
 *   lines between; the directive lines themselves disappear, indentation and all. CONDITION is a
 *   flag name, optionally preceded by `not` (`%% if not use_drf %%`). Blocks nest.
 *
 * Anything else that looks like a marker is a mistake in a template, so rendering fails loudly
 * rather than write a project with `%%` left in it.
 */

export type TemplateValues = Readonly<Record<string, string>>;
export type TemplateFlags = Readonly<Record<string, boolean>>;

const DIRECTIVE = /^\s*%%\s+(.*?)\s+%%\s*$/;
const PLACEHOLDER = /%%([a-z_]+)%%/g;

export class TemplateError extends Error {}

interface Block {
  /** Whether the lines of the branch being read are kept. */
  keeping: boolean;
  /** Whether the enclosing block keeps its lines (an inner `else` cannot revive a dropped outer block). */
  parentKeeping: boolean;
  sawElse: boolean;
  line: number;
}

export function renderTemplate(source: string, values: TemplateValues, flags: TemplateFlags, name = 'template'): string {
  const output: string[] = [];
  const blocks: Block[] = [];
  const keeping = (): boolean => blocks.length === 0 || blocks[blocks.length - 1]!.keeping;
  const lines = source.split('\n');
  lines.forEach((line, index) => {
    const where = `${name}:${index + 1}`;
    const directive = DIRECTIVE.exec(line);
    if (directive) {
      applyDirective(directive[1]!, blocks, flags, keeping(), where, index + 1);
      return;
    }
    if (keeping()) output.push(substitute(line, values, where));
  });
  const open = blocks.pop();
  if (open) throw new TemplateError(`${name}:${open.line}: "if" without "endif"`);
  return output.join('\n');
}

function applyDirective(text: string, blocks: Block[], flags: TemplateFlags, keepingNow: boolean, where: string, line: number): void {
  const words = text.split(/\s+/);
  if (words[0] === 'if') {
    const negated = words[1] === 'not';
    const flag = negated ? words[2] : words[1];
    if (flag === undefined || words.length !== (negated ? 3 : 2)) throw new TemplateError(`${where}: expected "if FLAG" or "if not FLAG"`);
    if (!(flag in flags)) throw new TemplateError(`${where}: unknown flag "${flag}"`);
    blocks.push({ keeping: keepingNow && flags[flag] !== negated, parentKeeping: keepingNow, sawElse: false, line });
    return;
  }
  const block = blocks[blocks.length - 1];
  if (text === 'else') {
    if (!block || block.sawElse) throw new TemplateError(`${where}: "else" without "if"`);
    block.sawElse = true;
    block.keeping = block.parentKeeping && !block.keeping;
    return;
  }
  if (text === 'endif') {
    if (!blocks.pop()) throw new TemplateError(`${where}: "endif" without "if"`);
    return;
  }
  throw new TemplateError(`${where}: unknown directive "${text}"`);
}

function substitute(line: string, values: TemplateValues, where: string): string {
  // Checked on the template's own text, so a value that happens to hold "%%" is not mistaken for one.
  if (line.replace(PLACEHOLDER, '').includes('%%')) throw new TemplateError(`${where}: a "%%" that is not a marker`);
  return line.replace(PLACEHOLDER, (_marker, key: string) => {
    const value = values[key];
    if (value === undefined) throw new TemplateError(`${where}: unknown value "${key}"`);
    return value;
  });
}
