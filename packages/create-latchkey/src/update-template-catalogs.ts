import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TEMPLATE_DIRECTORY } from './generate.js';
import { catalogsAfterMakemessages, templateCatalogs, untranslated } from './template-catalogs.js';

// `npm run generate:catalogs`: brings template/locale/ up to date with the template's messages
// (src/template-catalogs.ts), then lists what is left to translate. Run `npm run generate:example`
// after it, so that examples/site has the same catalogs.
const catalogs = catalogsAfterMakemessages();
const merged = templateCatalogs(catalogs);
const locale = join(TEMPLATE_DIRECTORY, 'locale');
for (const entry of readdirSync(locale, { recursive: true, withFileTypes: true })) {
  const path = join(entry.parentPath, entry.name).slice(locale.length + 1).split('\\').join('/');
  if (entry.isFile() && !merged.has(path)) rmSync(join(locale, path));
}
for (const [path, text] of merged) {
  mkdirSync(dirname(join(locale, path)), { recursive: true });
  writeFileSync(join(locale, path), text);
}
process.stdout.write(`template/locale: ${merged.size} catalogs written\n`);
for (const path of merged.keys()) {
  if (!path.endsWith('.po') || path.startsWith('en/')) continue;
  const missing = new Set([...catalogs.values()].flatMap((files) => untranslated(files.get(path)!)));
  if (missing.size > 0) process.stdout.write(`${path}: ${missing.size} to translate:\n${[...missing].map((key) => `  ${key}`).join('\n')}\n`);
}
