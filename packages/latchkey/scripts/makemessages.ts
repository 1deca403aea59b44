// `npm run makemessages` at the repository's root, for Latchkey's own catalogs (locale/): every
// message id of src/ and its templates, merged into each shipped language. `--check` writes
// nothing and fails when a catalog is not up to date (the completeness test runs the same).
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { SHIPPED_LANGUAGES } from '../src/core/i18n/languages.js';
import { makeMessages } from '../src/core/i18n/make-messages.js';
import { latchkeyCatalogSources } from '../src/core/i18n/latchkey-sources.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
const made = makeMessages({ ...latchkeyCatalogSources(root), languages: ['en', ...SHIPPED_LANGUAGES.filter((language) => language !== 'en')], check });
if (made.problems.length > 0) {
  process.stderr.write(`Messages the catalogs cannot hold as written:\n${made.problems.map((problem) => `  ${problem}`).join('\n')}\n`);
  process.exit(1);
}
if (check && made.changed.length > 0) {
  process.stderr.write(`Not up to date (run npm run makemessages): ${made.changed.join(', ')}\n`);
  process.exit(1);
}
process.stdout.write(`${made.messageCount} messages; ${made.changed.length === 0 ? 'no catalog changed' : `${check ? 'would change' : 'wrote'} ${made.changed.join(', ')}`} (${join('packages', 'latchkey', 'locale')}).\n`);
