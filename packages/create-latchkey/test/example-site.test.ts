import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_SITE, exampleSiteFiles, renderExampleSite, UNCOMPARED_FILES } from '../src/example-site.js';

describe('examples/site', () => {
  it('is exactly the generator output for use_drf=y and the other defaults (npm run generate:example)', () => {
    const generated = renderExampleSite();
    const expected = [...generated.keys()].filter((path) => !UNCOMPARED_FILES.includes(path)).sort();
    expect(exampleSiteFiles().filter((path) => !UNCOMPARED_FILES.includes(path))).toEqual(expected);
    for (const path of expected) {
      expect(readFileSync(join(EXAMPLE_SITE, path), 'utf8'), `${path} differs from the generator's output: run npm run generate:example`).toBe(generated.get(path));
    }
  });
});
