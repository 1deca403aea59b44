import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshRandomValues, renderProject } from './generate.js';
import { libraryReference } from './library.js';
import { optionsFrom, withDefaults } from './options.js';

/**
 * examples/site is the generator's output for use_drf=y with every other option at its default,
 * never edited by hand: `npm run generate:example` writes it, and a test fails when it differs.
 */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const EXAMPLE_SITE = join(REPOSITORY_ROOT, 'examples', 'site');

/** Generated but git-ignored: the production environment file, whose secrets are new every time. */
export const UNCOMPARED_FILES = ['.envs/production.env'];

const LOCAL_SECRET_KEY = /^LATCHKEY_SECRET_KEY=(.*)$/m;

/** The example's files as the generator makes them now, keeping the committed local secret key. */
export function renderExampleSite(): Map<string, string> {
  const answers = withDefaults({ use_drf: 'y' });
  const random = freshRandomValues();
  const localEnvironment = join(EXAMPLE_SITE, '.envs', 'local.env');
  // The one random value that is committed: kept, so that regenerating changes nothing.
  const committedKey = existsSync(localEnvironment) ? LOCAL_SECRET_KEY.exec(readFileSync(localEnvironment, 'utf8'))?.[1] : undefined;
  return renderProject(optionsFrom(answers), { ...random, localSecretKey: committedKey ?? random.localSecretKey }, libraryReference(EXAMPLE_SITE).dependency);
}

/** The example's files as they are in the checkout: tracked or new, without what git ignores. */
export function exampleSiteFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--deduplicate'], { cwd: EXAMPLE_SITE, encoding: 'utf8' });
  return listed
    .split('\n')
    .filter((path) => path !== '' && existsSync(join(EXAMPLE_SITE, path)))
    .sort();
}
