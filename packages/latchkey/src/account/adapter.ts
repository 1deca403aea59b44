import type { Settings } from '../config/settings.js';

/**
 * The project's hook points into the account flows, as allauth's DefaultAccountAdapter: a project
 * subclasses it (in its users/adapters.ts) and passes an instance to createLatchkey. Every flow
 * that needs a decision asks the adapter, so one override changes the pages, the headless API and
 * the admin alike.
 */
export class AccountAdapter {
  constructor(protected readonly settings: Settings) {}

  /**
   * Whether a new account may be created right now. By default it follows
   * ACCOUNT_ALLOW_REGISTRATION; a project may add rules (an invitation, a time window).
   */
  isOpenForSignup(): boolean | Promise<boolean> {
    return this.settings.ACCOUNT_ALLOW_REGISTRATION;
  }

  /**
   * Further rules on an email address a person signs up with or adds, after it has been
   * validated and normalized. Return it to accept it; throw
   * `new LatchkeyError('invalid_email', 'message for the person', { param: 'email' })` to refuse.
   */
  cleanEmail(email: string): string | Promise<string> {
    return email;
  }

  /** Further rules on a username at signup, after Django's character rules. Same contract as cleanEmail. */
  cleanUsername(username: string): string | Promise<string> {
    return username;
  }
}
