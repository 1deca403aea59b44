import { LatchkeyError } from '../core/errors.js';
import { maskUrlCredentials } from '../core/redact.js';

/** What an EMAIL_URL names, with credentials already URL-decoded. */
export type EmailBackendConfig =
  | { backend: 'smtp'; host: string; port: number; implicitTls: boolean; user?: string; password?: string }
  | { backend: 'console' }
  | { backend: 'memory' };

const ALLOWED_FORMS = 'smtp://[user:pass@]host:port, smtps://[user:pass@]host:port, console: or memory:';

/**
 * Reads EMAIL_URL. Anything outside the allowed forms stops start-up with one line that names the
 * variable, the value (password masked) and the forms allowed.
 *
 * Query parameters are refused rather than ignored: an operator who writes
 * `?tls_reject_unauthorized=false` must learn at start-up that certificate checks are not switched
 * off (they cannot be; trust the server's CA instead), not find out from a man in the middle.
 */
export function parseEmailUrl(value: string): EmailBackendConfig {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidEmailUrl(value, 'not a URL');
  }
  const scheme = url.protocol;
  if (scheme === 'console:' || scheme === 'memory:') {
    if (url.host !== '' || url.pathname !== '' || url.search !== '' || url.hash !== '') {
      throw invalidEmailUrl(value, `${scheme} takes nothing after the colon`);
    }
    return { backend: scheme === 'console:' ? 'console' : 'memory' };
  }
  if (scheme !== 'smtp:' && scheme !== 'smtps:') {
    throw invalidEmailUrl(value, `unsupported scheme ${JSON.stringify(scheme)}`);
  }
  if (url.hostname === '') {
    throw invalidEmailUrl(value, 'no host');
  }
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw invalidEmailUrl(value, 'no path or query parameters are accepted');
  }
  const implicitTls = scheme === 'smtps:';
  // Ports 25 and 465 are the registered defaults; an explicit port is what the contract documents.
  const port = url.port === '' ? (implicitTls ? 465 : 25) : Number(url.port);
  // IPv6 literals come back bracketed from URL; the socket API wants them bare.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const config: EmailBackendConfig = { backend: 'smtp', host, port, implicitTls };
  try {
    if (url.username !== '') config.user = decodeURIComponent(url.username);
    if (url.password !== '') config.password = decodeURIComponent(url.password);
  } catch {
    throw invalidEmailUrl(value, 'the user or password is not correctly URL-encoded');
  }
  return config;
}

function invalidEmailUrl(value: string, reason: string): LatchkeyError {
  return new LatchkeyError(
    'configuration_invalid',
    `EMAIL_URL=${JSON.stringify(maskUrlCredentials(value))} is not valid (${reason}); use ${ALLOWED_FORMS}.`,
    { param: 'EMAIL_URL' },
  );
}
