/**
 * `npm run bench`: runs every benchmark below, one after another, or only those named on the
 * command line (`npm run bench -- password-hashing`). A new benchmark is one more entry here.
 * The soak runs only when named (`npm run bench -- soak`): it takes ten minutes.
 */
import { benchmarkAdminUsers } from './admin-users.js';
import { benchmarkApi } from './api.js';
import { printGoals } from './goals.js';
import { benchmarkImportDjango } from './import-django.js';
import { benchmarkLoginBurst } from './login-burst.js';
import { benchmarkLoginEnumeration } from './login-enumeration.js';
import { benchmarkPasswordHashing } from './password-hashing.js';
import { benchmarkPages } from './pages.js';
import { benchmarkPeers } from './peers.js';
import { benchmarkScale } from './scale.js';
import { benchmarkSoak } from './soak.js';

interface Benchmark {
  name: string;
  run: () => Promise<void>;
  /** Left out of a run that names no benchmark: too long to come with every other. */
  onlyWhenNamed?: boolean;
}

const benchmarks: Benchmark[] = [
  { name: 'password-hashing', run: benchmarkPasswordHashing },
  { name: 'login-enumeration', run: benchmarkLoginEnumeration },
  { name: 'api', run: benchmarkApi },
  { name: 'admin-users', run: benchmarkAdminUsers },
  { name: 'pages', run: benchmarkPages },
  // better-auth beside Latchkey (a bench-only dependency).
  { name: 'peers', run: benchmarkPeers },
  { name: 'scale', run: benchmarkScale },
  { name: 'login-burst', run: benchmarkLoginBurst },
  { name: 'soak', run: benchmarkSoak, onlyWhenNamed: true },
  { name: 'import-django', run: benchmarkImportDjango, onlyWhenNamed: true },
];

// Options (`--database-url <url>` for admin-users, `--minutes <n>` for soak, `--users <n>` for scale) are the benchmarks' own; the rest are names.
const OPTIONS_WITH_A_VALUE = new Set(['--database-url', '--minutes', '--users']);
const requested = process.argv.slice(2).filter((argument, index, all) => !argument.startsWith('--') && !OPTIONS_WITH_A_VALUE.has(all[index - 1] ?? ''));
const unknown = requested.filter((name) => !benchmarks.some((benchmark) => benchmark.name === name));
if (unknown.length > 0) {
  console.error(`Unknown benchmark: ${unknown.join(', ')}. Known: ${benchmarks.map((benchmark) => benchmark.name).join(', ')}.`);
  process.exit(2);
}

for (const benchmark of benchmarks) {
  if (requested.length > 0 ? !requested.includes(benchmark.name) : benchmark.onlyWhenNamed === true) continue;
  console.log(`\n## ${benchmark.name}\n`);
  const started = performance.now();
  await benchmark.run();
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
printGoals();
