// @ts-check
/**
 * Builds what the generator publishes: its command compiled into dist/, and in vendor/ the
 * library it writes into every project (`npm pack` of packages/latchkey), so that the packed
 * generator works with no access to this repository and before the library is on the registry.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

const vendor = join(root, 'vendor');
rmSync(vendor, { recursive: true, force: true });
mkdirSync(vendor);
// Its output goes to stderr, so that `npm pack --json` of the generator stays parseable.
execFileSync('npm', ['pack', '--silent', '--pack-destination', vendor], { cwd: join(root, '..', 'latchkey'), stdio: ['ignore', process.stderr, 'inherit'] });
