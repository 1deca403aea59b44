// @ts-check
/**
 * The API reports of the package's four entries (api/*.api.md), made by API Extractor from the
 * built declarations in dist/ (build first). One config per entry: api-extractor*.json.
 *
 *   node scripts/api-report.js --local   (npm run api:report) writes the reports again.
 *   node scripts/api-report.js           (npm run api:check) fails when the built API differs from
 *                                        a committed report, or an export has no doc comment.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));
const localBuild = process.argv.includes('--local');
const configs = readdirSync(root)
  .filter((name) => /^api-extractor(\.[\w-]+)?\.json$/.test(name) && name !== 'api-extractor.base.json')
  .sort();

if (!existsSync(join(root, 'dist', 'index.d.ts'))) {
  console.error('api-report: dist/ has no declarations; run `npm run build` first.');
  process.exit(1);
}

/** @type {string[]} */
const failed = [];
/** @type {string[]} */
const changed = [];
for (const name of configs) {
  const config = ExtractorConfig.loadFileAndPrepare(join(root, name));
  const result = Extractor.invoke(config, {
    localBuild,
    // In a check, the difference from the committed report is printed as a diff.
    printApiReportDiff: !localBuild,
    // Which TypeScript API Extractor reads the declarations with is of no interest here.
    messageCallback: (message) => {
      if (message.messageId === 'console-preamble' || message.messageId === 'console-compiler-version-notice') {
        message.handled = true;
      }
    },
  });
  if (result.apiReportChanged) changed.push(config.reportFilePath);
  const undocumented = undocumentedExports(config.reportTempFilePath);
  for (const declaration of undocumented) {
    console.error(`Error: ${name}: the export has no doc comment: ${declaration}`);
  }
  if (!result.succeeded || undocumented.length > 0) failed.push(name);
}

if (localBuild) {
  console.log(changed.length === 0
    ? 'api-report: the API reports are up to date.'
    : `api-report: written again: ${changed.map((path) => path.slice(root.length)).join(', ')}. Review and commit them.`);
} else if (failed.length === 0) {
  console.log(`api-report: the built API matches the committed reports (${configs.length} entries).`);
}
if (failed.length > 0) {
  console.error(`\napi-report: failed for ${failed.join(', ')} (see above).`);
  if (!localBuild && changed.length > 0) {
    console.error(
      'The public API differs from the committed report in packages/latchkey/api/. If the change is\n' +
      'intended, update the report and commit it with the change, for review:\n\n' +
      '  npm run build && npm run api:report -w @latchkey/core\n',
    );
  }
  process.exit(1);
}

/**
 * The exports the report marks "(undocumented)": API Extractor writes that mark in a comment line
 * above each item without a doc comment, indented for a member, at the start of the line for an
 * export itself (which is what this returns: the first line of each such declaration).
 */
function undocumentedExports(/** @type {string} */ report) {
  const lines = readFileSync(report, 'utf8').split('\n');
  return lines.flatMap((line, index) => {
    if (!/^\/\/ .*\(undocumented\)$/.test(line)) return [];
    const declaration = lines.slice(index + 1).find((next) => !next.startsWith('//'));
    return [declaration ?? line];
  });
}
