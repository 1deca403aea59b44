import type { LatchkeyDeps } from '../deps.js';
import type { EmailMessage } from '../mail/ports.js';
import type { User } from './model.js';
import type { ClientInfo } from '../core/client.js';
import { accountUrl, siteUrl } from './urls.js';

export type { MailOutcome } from '../mail/ports.js';

export interface AccountEmail {
  template: string;
  to: string;
  context: Record<string, unknown>;
}

/**
 * Renders one account email from its templates: `<name>_subject.txt`, `<name>_message.txt` and
 * `<name>_message.html` (a project overrides any of them by path). The subject gets the prefix
 * (ACCOUNT_EMAIL_SUBJECT_PREFIX, by default "[Site name] ") and is kept to one line; links in the
 * context are built by the caller from settings (account/urls.ts), never from the request's Host header.
 * A mail that goes with a change of stored state is queued in the change's transaction
 * (account/changes.ts); one that changes nothing (a reset link, a sign-in code) is sent at once.
 */
export function renderAccountEmail(deps: Pick<LatchkeyDeps, 'settings' | 'templates' | 'adapter'>, input: AccountEmail): EmailMessage {
  const { settings, templates } = deps;
  const context = { site_name: settings.SITE_NAME, site_url: settings.SITE_URL, ...input.context };
  const message = deps.adapter.renderMail({ template: input.template, to: input.to, context }, (name, values) => templates.render(name, values));
  // One line, whatever the template or the adapter made of it: a line break in a subject would start a header.
  return { ...message, subject: message.subject.replace(/\s+/g, ' ').trim() };
}

/** Renders and sends an account email at once; a delivery failure throws LatchkeyError('mail_failed'). */
export async function sendAccountEmail(deps: Pick<LatchkeyDeps, 'settings' | 'mailer' | 'templates' | 'adapter'>, input: AccountEmail): Promise<void> {
  await deps.mailer.send(renderAccountEmail(deps, input));
}

/** An absolute link to a path of this site, from SITE_URL. */
export function siteLink(deps: Pick<LatchkeyDeps, 'settings'>, path: string): string {
  return siteUrl(deps.settings, path);
}

/**
 * The notice telling the account's owner, at its primary address, of a change to how the account
 * is protected (a password changed, a second factor added or removed): when, from where, and
 * where to reset the password if it was not them. Undefined for an account without an address.
 */
export function securityNotice(
  deps: Pick<LatchkeyDeps, 'settings' | 'templates' | 'clock' | 'adapter'>,
  user: User,
  template: string,
  client: ClientInfo,
  context: Record<string, unknown> = {},
): EmailMessage | undefined {
  if (user.email === '') return undefined;
  const at = deps.clock.now();
  return renderAccountEmail(deps, {
    template,
    to: user.email,
    context: {
      user,
      ip: client.ip,
      user_agent: client.userAgent,
      timestamp: `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
      password_reset_url: accountUrl(deps.settings, 'account_reset_password'),
      ...context,
    },
  });
}
