/**
 * The layer rules `npm run lint` applies to the library (packages/latchkey/layers.cjs, through
 * dependency-cruiser), held to a small tree written here: every import the layering allows passes,
 * and each deliberately bad import (one upward import per rule, and a cycle) fails with the rule
 * that names it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';
import { afterEach, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const { layerRules } = require('../layers.cjs') as { layerRules: (src: string) => IForbiddenRuleType[] };
const lintConfig = require('../../../.dependency-cruiser.cjs') as { forbidden: IForbiddenRuleType[] };

/** A file of the fixture tree and what it imports (paths below src/, without extension). */
type Tree = Record<string, string[]>;

/** Imports the layering allows, one or more per layer, down and sideways. */
const ALLOWED: Tree = {
  'core/errors': [],
  'core/rate-limit/rules': ['core/errors'],
  'config/settings': ['core/rate-limit/rules'],
  'config/choices': [],
  'account/model': ['config/settings'],
  'account/ports': ['type:account/model'],
  'mfa/model': ['config/choices'],
  'store': ['account/ports'],
  'storage/kysely/users': ['account/ports', 'core/errors', 'config/settings'],
  'cache/redis-counter-store': ['core/rate-limit/rules', 'storage/kysely/users'],
  'deps': ['type:store', 'type:config/settings'],
  'account/users': ['deps', 'account/model', 'core/errors'],
  'mfa/authenticators': ['deps', 'mfa/model', 'account/model'],
  'login/pipeline': ['account/users', 'mfa/authenticators'],
  'account/flows/signup': ['login/pipeline', 'account/users'],
  'http/kit/context': ['deps'],
  'http/kit/session-state': ['http/kit/context', 'login/pipeline'],
  'http/pages/login': ['http/kit/session-state', 'login/pipeline', 'http/pages/page'],
  'http/pages/page': ['http/kit/context'],
  'http/headless/auth': ['http/kit/session-state', 'account/flows/signup'],
  'cli/commands/migrate': ['latchkey', 'storage/kysely/users'],
  'latchkey': ['http/pages/login', 'storage/kysely/users', 'cache/redis-counter-store'],
  'index': ['latchkey'],
  'testing/latchkey': ['latchkey', 'account/users'],
  'account/users.test': ['testing/latchkey', 'account/users'],
};

/** One bad import per rule: the importing file, what it imports, and the rule it must break. */
const VIOLATIONS: { from: string; to: string; rule: string }[] = [
  { from: 'core/errors', to: 'account/users', rule: 'core-imports-only-core' },
  { from: 'config/choices', to: 'mfa/authenticators', rule: 'config-imports-only-core' },
  { from: 'account/model', to: 'account/users', rule: 'ports-only-describe' },
  { from: 'storage/kysely/users', to: 'account/users', rule: 'implementations-know-only-ports' },
  { from: 'mfa/authenticators', to: 'login/pipeline', rule: 'domain-below-flows' },
  { from: 'account/flows/signup', to: 'http/kit/context', rule: 'flows-below-adapters' },
  { from: 'http/pages/page', to: 'latchkey', rule: 'adapters-below-the-root' },
  { from: 'http/headless/auth', to: 'http/pages/page', rule: 'front-doors-stay-apart' },
  { from: 'account/users', to: 'testing/latchkey', rule: 'product-code-without-test-support' },
];

let root: string | undefined;

afterEach(async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/** Writes the tree into a fresh directory: each file imports its list (a `type:` entry as a type-only import). */
async function writeTree(tree: Tree): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), 'latchkey-layers-'));
  root = base;
  for (const [file, imports] of Object.entries(tree)) {
    const path = join(base, 'src', `${file}.ts`);
    const specifier = (target: string) => {
      const relativePath = relative(dirname(path), join(base, 'src', target));
      return relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
    };
    const lines = imports.map((entry) =>
      entry.startsWith('type:') ? `import type {} from '${specifier(entry.slice('type:'.length))}';` : `import '${specifier(entry)}';`,
    );
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `${lines.join('\n')}\nexport const here = '${file}';\n`);
  }
  return base;
}

interface Found {
  rule: string;
  from: string;
  to: string;
}

async function violationsIn(tree: Tree): Promise<Found[]> {
  const baseDir = await writeTree(tree);
  const result = await cruise(['src'], { baseDir, ruleSet: { forbidden: layerRules('src') }, validate: true, tsPreCompilationDeps: true });
  if (typeof result.output === 'string') throw new Error('expected a cruise result, not a report');
  const strip = (path: string) => path.replace(/^src\//, '').replace(/\.ts$/, '');
  return result.output.summary.violations.map((violation) => ({ rule: violation.rule.name, from: strip(violation.from), to: strip(violation.to) }));
}

function withImport(tree: Tree, from: string, to: string): Tree {
  return { ...tree, [from]: [...(tree[from] ?? []), to] };
}

describe('the layer rules', () => {
  it('are the ones npm run lint applies to the library', () => {
    expect(lintConfig.forbidden).toEqual(layerRules('packages/latchkey/src'));
  });

  it('let every import the layering allows pass', async () => {
    expect(await violationsIn(ALLOWED)).toEqual([]);
  });

  it.each(VIOLATIONS)('refuse $from importing $to ($rule)', async ({ from, to, rule }) => {
    const found = await violationsIn(withImport(ALLOWED, from, to));
    expect(found.filter((violation) => violation.rule !== 'no-circular')).toEqual([{ rule, from, to }]);
  });

  it('refuse an import cycle, also through types only, between modules any layer may hold', async () => {
    const cycle = withImport(withImport(ALLOWED, 'account/flows/signup', 'type:account/flows/verify-email'), 'account/flows/verify-email', 'type:account/flows/signup');
    const found = await violationsIn(cycle);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ rule: 'no-circular' });
    expect([found[0]!.from, found[0]!.to].sort()).toEqual(['account/flows/signup', 'account/flows/verify-email']);
  });
});
