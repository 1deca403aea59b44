/**
 * Every account page's path is written once, in config/url-names.ts, and named everywhere else
 * (urlFor). The library is moving there: this holds every file to the number of path literals it
 * has now, so that none is added and a file that drops some must lower its count here. When a
 * count reaches zero its line goes; when the table is empty, every path is named.
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
  'config/settings/accounts.ts': 3,
  'config/settings/headless.ts': 1,
  'config/settings/mfa.ts': 1,
  'http/admin/login.ts': 1,
  'http/admin/recent-authentication.ts': 1,
  'http/admin/social-apps.ts': 1,
  'http/kit/log-redaction.ts': 5,
  'http/pages/confirm-email.ts': 5,
  'http/pages/email.ts': 1,
  'http/pages/login-code.ts': 1,
  'http/pages/login.ts': 2,
  'http/pages/mfa-authenticate.ts': 3,
  'http/pages/mfa-manage.ts': 9,
  'http/pages/mfa-webauthn.ts': 8,
  'http/pages/passkey-login.ts': 1,
  'http/pages/passkey-signup.ts': 1,
  'http/pages/password.ts': 10,
  'http/pages/reauthenticate.ts': 4,
  'http/pages/sessions.ts': 2,
  'http/pages/signup.ts': 2,
  'http/pages/socialaccount.ts': 12,
  'http/social/provider-callback.ts': 7,
  'http/social/saml-endpoints.ts': 5,
  'mfa/flows/manage.ts': 1,
  'socialaccount/notifications.ts': 1,
  'socialaccount/providers/dummy.ts': 1,
  'socialaccount/providers/saml/provider.ts': 1,
  'templates/mfa/webauthn/authenticator_confirm_delete.html': 1,
  'templates/mfa/webauthn/authenticator_list.html': 2,
  'templates/mfa/webauthn/edit_form.html': 1,
  'templates/socialaccount/dummy_authenticate.html': 1,
};

function productFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'testing' ? [] : productFiles(path);
    return /\.(ts|html|txt)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

function literalCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const file of productFiles(SOURCE)) {
    const name = relative(SOURCE, file).split('\\').join('/');
    if (name === 'config/url-names.ts') continue;
    const found = readFileSync(file, 'utf8').match(PATH_LITERAL)?.length ?? 0;
    if (found > 0) counts[name] = found;
  }
  return counts;
}

describe('account page paths', () => {
  it('are spelled nowhere new: each file has at most the literals it had, none in a new file', () => {
    const counts = literalCounts();
    const over = Object.entries(counts).filter(([file, found]) => found > (REMAINING[file] ?? 0));
    expect(over, 'name the page with urlFor (config/url-names.ts) instead of writing its path').toEqual([]);
  });

  it('keeps this list true: a file that dropped literals lowers its count', () => {
    const counts = literalCounts();
    const stale = Object.entries(REMAINING).filter(([file, allowed]) => (counts[file] ?? 0) < allowed);
    expect(stale, 'lower these counts in REMAINING (or drop the line at zero)').toEqual([]);
  });
});
