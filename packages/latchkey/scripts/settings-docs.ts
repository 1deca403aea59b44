/**
 * `npm run docs:settings`: writes the tables of docs/settings.md ("Every setting") from the
 * settings' declarations (packages/latchkey/src/config/settings/), in place, leaving the prose
 * around them as it is. test/settings-docs.test.ts fails when the page is not what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withSettingsTables } from '../src/config/settings/docs.js';

const page = fileURLToPath(new URL('../../../docs/settings.md', import.meta.url));
const before = readFileSync(page, 'utf8');
const after = withSettingsTables(before);
if (after === before) {
  console.log('docs/settings.md is up to date.');
} else {
  writeFileSync(page, after);
  console.log('docs/settings.md: the settings tables are written again.');
}
