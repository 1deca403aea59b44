import type { Settings } from '../config/settings.js';

export interface CheckProblem {
  id: string;
  message: string;
  hint: string;
}

/**
 * Like Django's `check --deploy`: settings that are fine on a laptop and dangerous on the
 * internet. Each problem names the setting and how to fix it.
 */
export function findDeploymentProblems(settings: Settings): CheckProblem[] {
  const problems: CheckProblem[] = [];
  const add = (id: string, message: string, hint: string) => problems.push({ id, message, hint });
  const key = settings.SECRET_KEY;
  if (key.length < 50 || new Set(key).size < 5) {
    add('latchkey.W001', 'LATCHKEY_SECRET_KEY is shorter than 50 characters or has fewer than 5 distinct characters.', 'Generate a long random key, e.g. node -e "console.log(crypto.randomBytes(48).toString(\'base64url\'))".');
  }
  if (!settings.SESSION_COOKIE_SECURE) {
    add('latchkey.W002', 'SESSION_COOKIE_SECURE is false: the session cookie would be sent over plain HTTP.', 'Serve the site over HTTPS and set LATCHKEY_SESSION_COOKIE_SECURE=true.');
  }
  if (settings.SESSION_COOKIE_SECURE && !/^__(Host|Secure)-/.test(settings.SESSION_COOKIE_NAME)) {
    add('latchkey.W003', `SESSION_COOKIE_NAME "${settings.SESSION_COOKIE_NAME}" has no __Host- prefix.`, 'Use __Host-sessionid so that subdomains cannot plant or overwrite the cookie.');
  }
  if (!settings.CSRF_COOKIE_SECURE) {
    add('latchkey.W004', 'CSRF_COOKIE_SECURE is false: the CSRF cookie would be sent over plain HTTP.', 'Set LATCHKEY_CSRF_COOKIE_SECURE=true.');
  }
  if (settings.ALLOWED_HOSTS.length === 0) {
    add('latchkey.W005', 'ALLOWED_HOSTS is empty: every request would be refused.', 'Set LATCHKEY_ALLOWED_HOSTS to the site\'s host names.');
  } else if (settings.ALLOWED_HOSTS.includes('*')) {
    add('latchkey.W006', 'ALLOWED_HOSTS contains "*": any Host header is accepted.', 'List the site\'s host names in LATCHKEY_ALLOWED_HOSTS.');
  }
  if (settings.ADMIN_URL === 'admin/') {
    add('latchkey.W007', 'ADMIN_URL is the default "admin/", the first path an attacker tries.', 'Set LATCHKEY_ADMIN_URL to a hard-to-guess path such as "staff-7f3k2x/".');
  }
  if (settings.SECURE_HSTS_SECONDS === 0) {
    add(
      'latchkey.W015',
      'SECURE_HSTS_SECONDS is 0: no Strict-Transport-Security header is sent, so a browser may try the site over plain HTTP, where an attacker on the network can intercept the visit.',
      'Set LATCHKEY_SECURE_HSTS_SECONDS=31536000 (the production default) once the site is served over HTTPS only.',
    );
  }
  if (!settings.SITE_URL.startsWith('https://')) {
    add('latchkey.W008', `SITE_URL "${settings.SITE_URL}" is not HTTPS: links in emails would travel in clear.`, 'Set LATCHKEY_SITE_URL to the https:// address of the site.');
  }
  if (/^(console|memory):/.test(settings.EMAIL_URL)) {
    add('latchkey.W009', `EMAIL_URL "${settings.EMAIL_URL}" does not deliver email: users could not verify addresses or reset passwords.`, 'Set EMAIL_URL to your SMTP server, e.g. smtps://user:pass@smtp.example.com:465.');
  }
  if (settings.ACCOUNT_EMAIL_VERIFICATION !== 'mandatory') {
    add('latchkey.W010', `ACCOUNT_EMAIL_VERIFICATION is "${settings.ACCOUNT_EMAIL_VERIFICATION}": accounts can log in with addresses nobody confirmed.`, 'Use mandatory in production.');
  }
  if (/@localhost\b/.test(settings.DEFAULT_FROM_EMAIL)) {
    add('latchkey.W012', `DEFAULT_FROM_EMAIL "${settings.DEFAULT_FROM_EMAIL}" is not a real sender: mail from it is likely to be rejected as spam.`, 'Set DEFAULT_FROM_EMAIL, e.g. "Example <noreply@example.com>".');
  }
  if (settings.ACCOUNT_RATE_LIMITS === false) {
    add('latchkey.W011', 'ACCOUNT_RATE_LIMITS is false: passwords can be guessed without limit.', 'Remove LATCHKEY_ACCOUNT_RATE_LIMITS=false.');
  }
  const placeholders = settingsNamingPlaceholders(settings);
  if (placeholders.length > 0) {
    add(
      'latchkey.W016',
      `${placeholders.join(', ')} still name example.com (or example.org, example.net): a placeholder, as a generated project's --yes answers leave it, not the site's own domain.`,
      'Set them to the site\'s real domain and sender, e.g. regenerate the project with its own answers or set LATCHKEY_SITE_URL, LATCHKEY_ALLOWED_HOSTS and DEFAULT_FROM_EMAIL.',
    );
  }
  addHeadlessProblems(settings, add);
  return problems;
}

/** A host in the domains RFC 2606 keeps for examples (example.com and its kin, and their subdomains). */
const PLACEHOLDER_DOMAIN = /(?:^|[^a-z0-9.-])(?:[a-z0-9-]+\.)*example\.(?:com|org|net)(?![a-z0-9-])/i;

/** The settings whose value still names a placeholder domain, whatever their type (a URL, a list, a sender). */
function settingsNamingPlaceholders(settings: Settings): string[] {
  return Object.entries(settings)
    .filter(([name, value]) => name !== 'SECRET_KEY' && value !== null && value !== undefined && PLACEHOLDER_DOMAIN.test(typeof value === 'string' ? value : JSON.stringify(value)))
    .map(([name]) => name);
}

/**
 * The headless API's settings. Start-up already refuses HEADLESS_ONLY without the confirmation
 * and reset routes; the other links only degrade, so they are warnings here.
 */
function addHeadlessProblems(settings: Settings, add: (id: string, message: string, hint: string) => void): void {
  const frontEnd = settings.HEADLESS_FRONTEND_URLS;
  if (settings.HEADLESS_ONLY) {
    const missing = (['account_reset_password', 'account_signup'] as const).filter((name) => frontEnd[name] === undefined);
    if (missing.length > 0) {
      add(
        'latchkey.W013',
        `HEADLESS_ONLY is true but HEADLESS_FRONTEND_URLS names no ${missing.join(' or ')}: security notices and "account already exists" emails would link to pages that do not exist.`,
        'Add the front end\'s "forgot password" and signup routes to LATCHKEY_HEADLESS_FRONTEND_URLS.',
      );
    }
  }
  const plain = [...settings.CORS_ALLOWED_ORIGINS, ...Object.values(frontEnd)].filter((url) => url.startsWith('http://'));
  if (plain.length > 0) {
    add(
      'latchkey.W014',
      `Front-end addresses that are not HTTPS: ${plain.join(', ')}. Keys mailed to them, and the session they are given, would travel in clear.`,
      'Use https:// in LATCHKEY_CORS_ALLOWED_ORIGINS and LATCHKEY_HEADLESS_FRONTEND_URLS.',
    );
  }
}

export function formatProblems(problems: CheckProblem[]): string {
  if (problems.length === 0) return 'System check identified no issues (0 silenced).\n';
  const lines = problems.map((problem) => `?: (${problem.id}) ${problem.message}\n\tHINT: ${problem.hint}`);
  const count = problems.length === 1 ? '1 issue' : `${problems.length} issues`;
  return `System check identified some issues:\n\n${lines.join('\n')}\n\nSystem check identified ${count} (0 silenced).\n`;
}
