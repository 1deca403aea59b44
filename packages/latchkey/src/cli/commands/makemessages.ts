// `manage makemessages`, as Django's: the project's message ids into its catalogs (locale/).
import { runFrom, type Command } from '../declaration.js';

export const makemessages: Command = {
  summary: "extract the project's messages into its translation catalogs",
  description:
    "Reads every message id of the project's code (src/: msg(), nmsg(), pmsg(), msgid()) and templates (templates/: _(), ngettext(), pgettext()), writes them to locale/messages.pot, and merges them into locale/<language>/LC_MESSAGES/messages.po for each language of LANGUAGES: a translation still in use is kept, a new message gets an empty one, a message no longer used is dropped (unless it overrides one of Latchkey's). Nothing outside locale/ changes; run it again after changing a message. See node_modules/@latchkey/core/docs/translations.md.",
  options: {
    check: { type: 'boolean', help: 'write nothing; fail when a catalog is not up to date (for CI)' },
  },
  run: runFrom(() => import('./makemessages.run.js')),
};
