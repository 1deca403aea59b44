import { maskUrlCredentials } from '../core/redact.js';
import { parseEmailUrl } from './email-url.js';
import type { Settings } from './settings.js';
import { latchkeyUrls } from './url-names.js';

/** Where mail goes, in words: the console, memory, or the server it is sent through (no credentials). */
function mailDestination(emailUrl: string): string {
  const config = parseEmailUrl(emailUrl);
  if (config.backend === 'console') return 'printed in this console (EMAIL_URL=console:)';
  if (config.backend === 'memory') return 'kept in memory, sent nowhere (EMAIL_URL=memory:)';
  return `sent through ${new URL(emailUrl).protocol}//${new URL(emailUrl).host}`;
}

/**
 * The few lines a server prints once it listens in local mode, so that the first thing a developer
 * reads says where everything is: the site (SITE_URL, which mailed links use), the admin, where
 * mail goes, and the database (its password masked). The generated project's server prints it.
 */
export function startupBanner(settings: Pick<Settings, 'SITE_NAME' | 'SITE_URL' | 'ADMIN_URL' | 'URL_PREFIX' | 'EMAIL_URL' | 'DATABASE_URL' | 'ENVIRONMENT'>): string {
  const site = new URL(settings.SITE_URL);
  const at = (path: string) => new URL(path, site).toString();
  const rows: [string, string][] = [
    ['site', at(latchkeyUrls(settings).mounted('/'))],
    ['admin', at(latchkeyUrls(settings).urlFor('admin:index'))],
    ['mail', mailDestination(settings.EMAIL_URL)],
    ['database', maskUrlCredentials(settings.DATABASE_URL)],
  ];
  const lines = rows.map(([label, value]) => `  ${label.padEnd(9)}${value}`);
  return [`${settings.SITE_NAME} (${settings.ENVIRONMENT} mode)`, ...lines, ''].join('\n');
}
