import { domainToASCII } from 'node:url';
import { AccountAdapter, LatchkeyError } from 'latchkey';

/**
 * The project's account adapter: Latchkey's hook points, as allauth's ACCOUNT_ADAPTER. Pass an
 * instance to createLatchkey (src/server.ts); every page and API that signs people up or adds an
 * address asks it.
 *
 * This one adds a rule: when ACCOUNT_EMAIL_DOMAIN_ALLOWLIST names domains (environment variable
 * LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST=example.com,example.org), only addresses at exactly those
 * domains may sign up or be added to an account; the empty default allows any domain. Applying it
 * to added addresses as well keeps it from being sidestepped by signing up at an allowed domain
 * and then switching the account to another one.
 */
export class ExampleAccountAdapter extends AccountAdapter {
  override cleanEmail(email: string): string {
    const allowed = this.settings.ACCOUNT_EMAIL_DOMAIN_ALLOWLIST;
    if (allowed.length === 0) return email;
    // The address arrives normalized (lower case, punycode domain), so a plain comparison is
    // exact: "mail.example.com" is not "example.com", and neither is "example.com.evil.net".
    const domain = email.slice(email.lastIndexOf('@') + 1);
    // The address's domain is already in its ASCII (punycode) form; bring the entries to it too,
    // so that an internationalised domain in the list matches.
    if (allowed.some((entry) => domainToASCII(entry.toLowerCase()) === domain)) return email;
    throw new LatchkeyError('invalid_email', `Sign-up is limited to addresses at: ${allowed.join(', ')}.`, { param: 'email' });
  }
}
