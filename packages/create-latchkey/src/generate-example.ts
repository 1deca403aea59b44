import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EXAMPLE_SITE, exampleSiteFiles, renderExampleSite } from './example-site.js';

// `npm run generate:example`: rewrites examples/site from the templates, removing files the
// generator no longer makes.
const files = renderExampleSite();
for (const path of exampleSiteFiles()) {
  if (!files.has(path)) rmSync(join(EXAMPLE_SITE, path));
}
for (const [path, content] of files) {
  const file = join(EXAMPLE_SITE, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}
process.stdout.write(`examples/site regenerated: ${files.size} files\n`);
