import { domainToASCII } from 'node:url';
import {
  AccountAdapter as LatchkeyAccountAdapter,
  LatchkeyError,
  SocialAccountAdapter as LatchkeySocialAccountAdapter,
  type Settings,
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
   * Latchkey asks cleanEmail for every such address: a typed one, one added later (so signing up
   * at an allowed domain and then switching to another does not sidestep it), and the one a
   * provider gives a new person (refused, the person gets the social signup form, which says why
   * and takes another address).
   */
  override cleanEmail(email: string): string {
    if (isAllowedByDomainAllowlist(this.settings, email)) return email;
    // The message is translated where it is shown; what varies is a placeholder (locale/, README.md "Translations").
    const domains = this.settings.ACCOUNT_EMAIL_DOMAIN_ALLOWLIST.join(', ');
    throw new LatchkeyError('invalid_email', 'Sign-up is limited to addresses at: {domains}.', { param: 'email', params: { domains } });
  }
}

/**
 * The project's social account adapter, as allauth's SOCIALACCOUNT_ADAPTER: who may sign up
 * through a provider. Latchkey's populateUser fills the new user from what the provider said (its
 * address; its full name, or else its first and last names); override it to fill more, starting
 * from `super.populateUser(login)`. Rules on addresses belong in the account adapter's
 * cleanEmail, which judges a provider's address too.
 */
export class SocialAccountAdapter extends LatchkeySocialAccountAdapter {
  constructor(
    settings: Settings,
    private readonly autoProvisioning: AutoProvisioning = autoProvisioningFromEnvironment(),
  ) {
    super(settings);
  }

  /**
   * Open to everyone while ACCOUNT_ALLOW_REGISTRATION is true (LATCHKEY_ACCOUNT_ALLOW_REGISTRATION),
   * the same switch as local signup. While it is false, a company identity provider named in
   * SAML_AUTO_PROVISION_IDPS still signs its people up at their first sign-in: the IdP already
   * decides who works here. SAML_AUTO_PROVISION_DEPARTMENTS, when set, narrows that to people of
   * those departments.
   */
  override isOpenForSignup(login: SocialLogin): boolean {
    if (this.settings.ACCOUNT_ALLOW_REGISTRATION) return true;
    if (!this.autoProvisioning.idps.includes(login.provider)) return false;
    const { departments } = this.autoProvisioning;
    return departments.length === 0 || departments.includes(departmentOf(login));
  }
}

/**
 * Who the company's identity providers sign up while public signup is closed, comma-separated in
 * the environment. `idps` are SAML apps' provider_id (the IdP's entity id, as SocialLogin.provider
 * carries it; an OpenID Connect app's provider_id works too). `departments` are compared exactly
 * as the IdP writes them; empty allows any. These are the project's own variables, not LATCHKEY_
 * ones: start-up refuses a LATCHKEY_ variable that is not a Latchkey setting.
 */
export interface AutoProvisioning {
  readonly idps: readonly string[];
  readonly departments: readonly string[];
}

export function autoProvisioningFromEnvironment(env: NodeJS.ProcessEnv = process.env): AutoProvisioning {
  return { idps: commaSeparated(env.SAML_AUTO_PROVISION_IDPS), departments: commaSeparated(env.SAML_AUTO_PROVISION_DEPARTMENTS) };
}

/** The SAML attribute holding the department: add an attribute statement of this name at the IdP. */
const DEPARTMENT_ATTRIBUTE = 'department';

/**
 * The person's department: the first value of the IdP's `department` attribute (a SAML IdP's
 * attributes arrive in login.extraData as lists of strings, by name), or '' when it sent none.
 */
export function departmentOf(login: SocialLogin): string {
  return departmentIn(login.extraData);
}

/** The department in what a provider said (a login's extraData, or a social account's). */
function departmentIn(extraData: Readonly<Record<string, unknown>> | undefined): string {
  const values = extraData?.[DEPARTMENT_ATTRIBUTE];
  const first: unknown = Array.isArray(values) ? values[0] : values;
  return typeof first === 'string' ? first.trim() : '';
}

/** What departmentOfUser reads of a social account (latchkey.socialAccounts.listForUser). */
export interface AccountAttributes {
  readonly extraData: Readonly<Record<string, unknown>>;
  readonly lastLogin: Date;
}

/**
 * Where the department is kept: the user model has no department column, but Latchkey keeps
 * every attribute the IdP sent on the person's social account (its extraData) and replaces them at
 * each sign-in, so the department there is the one the IdP said last. This is the person's
 * department as src/users/pages.ts shows it on their page: that of the account they signed in with
 * most recently among those that carry one, or '' when none does. A project that must query or
 * edit departments adds a table of its own and fills it from login.extraData instead.
 */
export function departmentOfUser(accounts: readonly AccountAttributes[]): string {
  const newestFirst = [...accounts].sort((a, b) => b.lastLogin.getTime() - a.lastLogin.getTime());
  for (const account of newestFirst) {
    const department = departmentIn(account.extraData);
    if (department !== '') return department;
  }
  return '';
}

function commaSeparated(value: string | undefined): string[] {
  return (value ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
}

/**
 * Whether an address is at one of ACCOUNT_EMAIL_DOMAIN_ALLOWLIST's domains (always, while the list
 * is empty). Exactly those domains: "mail.example.com" is not "example.com", and neither is
 * "example.com.evil.net". Both sides are brought to lower-case ASCII (punycode), so that an
 * internationalised domain matches however it was written.
 */
function isAllowedByDomainAllowlist(settings: Settings, email: string): boolean {
  const allowed = settings.ACCOUNT_EMAIL_DOMAIN_ALLOWLIST;
  if (allowed.length === 0) return true;
  const domain = domainToASCII(email.slice(email.lastIndexOf('@') + 1).toLowerCase());
  return domain !== '' && allowed.some((entry) => domainToASCII(entry.toLowerCase()) === domain);
}
