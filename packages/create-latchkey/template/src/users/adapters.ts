import { domainToASCII } from 'node:url';
import {
  AccountAdapter as LatchkeyAccountAdapter,
  LatchkeyError,
  NAME_MAX_LENGTH,
  SocialAccountAdapter as LatchkeySocialAccountAdapter,
  type NewSocialUser,
  type SocialLogin,
} from '@latchkey/core';

/**
 * The project's account adapter: Latchkey's hook points for local accounts, as allauth's
 * ACCOUNT_ADAPTER. src/server.ts passes an instance to createLatchkey; every page and API that
 * signs people up or adds an address asks it. Add the project's own rules here.
 */
export class AccountAdapter extends LatchkeyAccountAdapter {
  /** Signup is open while ACCOUNT_ALLOW_REGISTRATION is true (LATCHKEY_ACCOUNT_ALLOW_REGISTRATION). */
  override isOpenForSignup(): boolean {
    return this.settings.ACCOUNT_ALLOW_REGISTRATION;
  }

  /**
   * An example of a further rule: when ACCOUNT_EMAIL_DOMAIN_ALLOWLIST names domains
   * (LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST=example.com,example.org), only addresses at exactly
   * those domains may sign up or be added to an account; the empty default allows any domain.
   * Applying it to added addresses too keeps it from being sidestepped by signing up at an allowed
   * domain and then switching the account to another one.
   */
  override cleanEmail(email: string): string {
    const allowed = this.settings.ACCOUNT_EMAIL_DOMAIN_ALLOWLIST;
    if (allowed.length === 0) return email;
    // The address arrives normalized (lower case, punycode domain), so a plain comparison is
    // exact: "mail.example.com" is not "example.com", and neither is "example.com.evil.net".
    const domain = email.slice(email.lastIndexOf('@') + 1);
    // Entries are brought to the same ASCII (punycode) form, so an internationalised domain matches.
    if (allowed.some((entry) => domainToASCII(entry.toLowerCase()) === domain)) return email;
    throw new LatchkeyError('invalid_email', `Sign-up is limited to addresses at: ${allowed.join(', ')}.`, { param: 'email' });
  }
}

/**
 * The project's social account adapter, as allauth's SOCIALACCOUNT_ADAPTER: the same signup switch
 * for people arriving from a provider, and the user's fields filled from what the provider says.
 */
export class SocialAccountAdapter extends LatchkeySocialAccountAdapter {
  override isOpenForSignup(_login: SocialLogin): boolean {
    return this.settings.ACCOUNT_ALLOW_REGISTRATION;
  }

  /** The new user's name: the provider's full name, or else its first and last names. */
  override async populateUser(login: SocialLogin): Promise<NewSocialUser> {
    const user = await super.populateUser(login);
    if (user.name !== '') return user;
    const { name, firstName, lastName } = login.data;
    const fullName = name?.trim() || [firstName?.trim(), lastName?.trim()].filter(Boolean).join(' ');
    // A provider's name longer than the field allows is cut, not refused: the person did not type it.
    return { ...user, name: [...fullName].slice(0, NAME_MAX_LENGTH).join('') };
  }
}
