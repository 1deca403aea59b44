/**
 * Every page's path is written once, in config/url-names.ts (the account pages' ACCOUNT_URLS, the
 * admin's ADMIN_URLS), and named everywhere else (urlFor, url() in templates). The library is
 * moving there: this holds every file to the number of path literals it has now, so that none is
 * added and a file that drops some must lower its count here. When a count reaches zero its line
 * goes; when the tables are empty, every path is named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SOURCE = fileURLToPath(new URL('../src/', import.meta.url));
/** A quote, then an account page's path: '/accounts/...', "/accounts/...", `/accounts/...`. */
const PATH_LITERAL = /['"`]\/accounts\//g;

/** Files still spelling paths, and how many they may spell (lower these as paths move to urlFor). */
const REMAINING: Readonly<Record<string, number>> = {
};

function productFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : productFiles(path);
    return /\.(ts|html|txt)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * An admin page's path spelled out, relative to ADMIN_URL: a path appended to the admin's root or a
 * model's list in code (`${root}logout/`, `${listPath}${id}/change/`; a query, `${listPath}?user=`,
 * is not a path) or in a template (`{{ admin_root }}logout/`, `{{ list_path }}add/`), a model's
 * `<app>/<model>/` segment, or `/admin/` itself.
 */
const ADMIN_PATH_LITERALS = [
  /\$\{\s*(?:root|listPath|loginPath|adminRoot\([^)]*\))\s*\}(?![?`]|\$\{withQuery)/g,
  /\{\{\s*(?:admin_root|list_path)\s*\}\}(?!["'?])/g,
  /['"`](?:\/admin\/|(?:users\/user|account\/emailaddress|socialaccount\/social(?:app|account|token)|authtoken\/tokenproxy|mfa\/authenticator|sessions\/session|audit\/auditrecord)\/)/g,
];

/** Files still spelling admin paths, and how many they may spell (name the page: `url('admin:model_change', { app, model, id })`). */
const ADMIN_REMAINING: Readonly<Record<string, number>> = {
};

function literalCounts(patterns: readonly RegExp[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const file of productFiles(SOURCE)) {
    const name = relative(SOURCE, file).split('\\').join('/');
    if (name === 'config/url-names.ts') continue;
    const text = readFileSync(file, 'utf8');
    const found = patterns.reduce((sum, pattern) => sum + (text.match(pattern)?.length ?? 0), 0);
    if (found > 0) counts[name] = found;
  }
  return counts;
}

describe.each([
  { kind: 'account page paths', patterns: [PATH_LITERAL], remaining: REMAINING, list: 'REMAINING' },
  { kind: 'admin page paths', patterns: ADMIN_PATH_LITERALS, remaining: ADMIN_REMAINING, list: 'ADMIN_REMAINING' },
])('$kind', ({ patterns, remaining, list }) => {
  it('are spelled nowhere new: each file has at most the literals it had, none in a new file', () => {
    const counts = literalCounts(patterns);
    const over = Object.entries(counts).filter(([file, found]) => found > (remaining[file] ?? 0));
    expect(over, 'name the page with urlFor (config/url-names.ts) instead of writing its path').toEqual([]);
  });

  it('keeps this list true: a file that dropped literals lowers its count', () => {
    const counts = literalCounts(patterns);
    const stale = Object.entries(remaining).filter(([file, allowed]) => (counts[file] ?? 0) < allowed);
    expect(stale, `lower these counts in ${list} (or drop the line at zero)`).toEqual([]);
  });
});
