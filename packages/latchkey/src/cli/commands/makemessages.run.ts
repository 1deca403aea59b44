// What `manage makemessages` does (its command line is declared in makemessages.ts).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { po } from 'gettext-parser';
import type { ParsedArguments } from '../arguments.js';
import type { CommandContext } from '../command.js';
import { CommandError } from '../io.js';
import { LATCHKEY_LOCALE_DIR } from '../../core/i18n/catalogs.js';
import { makeMessages } from '../../core/i18n/make-messages.js';

/** Latchkey's own message ids: a project's catalog keeps a translation of one as an override. */
async function latchkeyMessageIds(): Promise<Set<string>> {
  const ids = new Set<string>();
  const template = await readFile(join(LATCHKEY_LOCALE_DIR, 'latchkey.pot'));
  for (const [context, messages] of Object.entries(po.parse(template).translations)) for (const id of Object.keys(messages)) ids.add(`${context}\u0004${id}`);
  return ids;
}

export async function run(context: CommandContext, parsed: ParsedArguments): Promise<number> {
  const { io, settings } = context;
  const root = io.cwd;
  const check = parsed.flag('check');
  const overrides = await latchkeyMessageIds();
  const made = makeMessages({
    root,
    codeDirs: [join(root, 'src')],
    templateDirs: [join(root, 'templates')],
    localeDir: join(root, 'locale'),
    domain: 'messages',
    languages: settings.LANGUAGES,
    keep: (id, messageContext) => overrides.has(`${messageContext ?? ''}\u0004${id}`),
    check,
  });
  if (made.problems.length > 0) throw new CommandError(`These messages cannot be extracted as written:\n${made.problems.map((problem) => `  ${problem}`).join('\n')}`);
  if (check && made.changed.length > 0) throw new CommandError(`The catalogs are not up to date (run makemessages): ${made.changed.join(', ')}.`);
  const what = made.changed.length === 0 ? 'no catalog changed' : `${check ? 'would change' : 'wrote'} ${made.changed.join(', ')}`;
  io.stdout.write(`${made.messageCount} message(s); ${what}.\n`);
  return 0;
}
