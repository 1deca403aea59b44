import type { LatchkeyDeps } from '../deps.js';
import { apiTokensOf, type LatchkeyApiTokens } from './api-tokens.js';
import { authenticatorsOf, type LatchkeyAuthenticators } from './authenticators.js';
import { emailAddressesOf, type LatchkeyEmailAddresses } from './email-addresses.js';
import { auditOf, eventsOf, type LatchkeyAudit, type LatchkeyEvents } from './events.js';
import { mailOf, type LatchkeyMail } from './mail.js';
import { sessionsOf, type LatchkeySessions } from './sessions.js';
import { socialAccountsOf, type LatchkeySocialAccounts } from './social-accounts.js';
import { usersOf, type LatchkeyUsers } from './users.js';
import { userFieldsOf, type LatchkeyUserFields } from './user-fields.js';

/**
 * The operations a project's code may call (docs/extending.md): each a small object over the
 * flows and the store, so that a project never holds a repository or a port, and the library
 * can change those without breaking it.
 */
export interface LatchkeyOperations {
  readonly users: LatchkeyUsers;
  readonly emailAddresses: LatchkeyEmailAddresses;
  readonly sessions: LatchkeySessions;
  readonly apiTokens: LatchkeyApiTokens;
  readonly authenticators: LatchkeyAuthenticators;
  readonly socialAccounts: LatchkeySocialAccounts;
  readonly events: LatchkeyEvents;
  readonly audit: LatchkeyAudit;
  readonly mail: LatchkeyMail;
  /** The project's own user fields, for its pages and API views (docs/user-fields.md). */
  readonly userFields: LatchkeyUserFields;
}

export function operationsOf(deps: LatchkeyDeps): LatchkeyOperations {
  return {
    users: usersOf(deps),
    emailAddresses: emailAddressesOf(deps),
    sessions: sessionsOf(deps),
    apiTokens: apiTokensOf(deps),
    authenticators: authenticatorsOf(deps),
    socialAccounts: socialAccountsOf(deps),
    events: eventsOf(deps),
    audit: auditOf(deps),
    mail: mailOf(deps),
    userFields: userFieldsOf(deps),
  };
}

export type { LatchkeyApiTokens } from './api-tokens.js';
export type { AuthenticatorSummary, LatchkeyAuthenticators } from './authenticators.js';
export type { LatchkeyEmailAddresses } from './email-addresses.js';
export type { LatchkeyAudit, LatchkeyEvents } from './events.js';
export type { LatchkeyMail, ProjectMail } from './mail.js';
export type { LatchkeySessions, SessionSummary, StartedSession } from './sessions.js';
export type { LatchkeySocialAccounts, NewConnection, ProviderTokens } from './social-accounts.js';
export type { LatchkeyUsers, UserUpdate } from './users.js';
export type { LatchkeyUserFields } from './user-fields.js';
