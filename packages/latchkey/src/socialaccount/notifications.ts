import { securityNotice, siteLink } from '../account/emails.js';
import type { User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import type { LatchkeyDeps } from '../deps.js';
import type { EmailMessage } from '../mail/ports.js';

export type SocialAccountNotification = 'account_connected' | 'account_disconnected';

/**
 * The notice telling the account's owner that a way to sign in was added or removed (allauth's
 * account_connected / account_disconnected mails): an attacker who connects their own provider
 * account to a victim's account keeps a way in, so the owner must hear of it. The link to the
 * connections page is left out when the project serves no pages (HEADLESS_ONLY). Queued with the
 * change it tells of (account/changes.ts).
 */
export function socialAccountNotice(deps: LatchkeyDeps, user: User, template: SocialAccountNotification, providerName: string, client: ClientInfo): EmailMessage | undefined {
  const context = { provider_name: providerName, ...(deps.settings.HEADLESS_ONLY ? {} : { connections_url: siteLink(deps, deps.urls.urlFor('socialaccount_connections')) }) };
  return securityNotice(deps, user, `socialaccount/email/${template}`, client, context);
}
