import type { LatchkeyDeps } from '../deps.js';
import type { User } from './model.js';
import type { ClientInfo } from '../core/client.js';
import { accountUrl, siteUrl } from './urls.js';

/**
 * Sends one account email from its templates: `<name>_subject.txt`, `<name>_message.txt` and
 * `<name>_message.html` (a project overrides any of them by path). The subject gets the prefix
 * (ACCOUNT_EMAIL_SUBJECT_PREFIX, by default "[Site name] ") and is kept to one line; links in the
 * context are built by the caller from settings (account/urls.ts), never from the request's Host header.
 * A delivery failure throws LatchkeyError('mail_failed'); each flow decides what the person sees.
 */
export async function sendAccountEmail(
  deps: Pick<LatchkeyDeps, 'settings' | 'mailer' | 'templates'>,
  input: { template: string; to: string; context: Record<string, unknown> },
): Promise<void> {
  const { settings, templates } = deps;
  const context = { site_name: settings.SITE_NAME, site_url: settings.SITE_URL, ...input.context };
  const prefix = settings.ACCOUNT_EMAIL_SUBJECT_PREFIX ?? `[${settings.SITE_NAME}] `;
  const subject = `${prefix}${templates.render(`${input.template}_subject.txt`, context)}`.replace(/\s+/g, ' ').trim();
  await deps.mailer.send({
    to: [input.to],
    subject,
    text: templates.render(`${input.template}_message.txt`, context),
    html: templates.render(`${input.template}_message.html`, context),
  });
}

/** An absolute link to a path of this site, from SITE_URL. */
export function siteLink(deps: Pick<LatchkeyDeps, 'settings'>, path: string): string {
  return siteUrl(deps.settings, path);
}

/**
 * What became of a notification email. A flow never fails over one: by the time it is sent the
 * change has happened, and telling the person "error" would make them think it had not.
 * The adapter logs a failure.
 */
export type MailOutcome = { status: 'sent' } | { status: 'skipped' } | { status: 'failed'; error: unknown };

/**
 * Tells the account's owner, at its primary address, of a change to how the account is protected
 * (a password changed, a second factor added or removed): when, from where, and where to reset
 * the password if it was not them. Never throws.
 */
export async function sendSecurityNotice(
  deps: Pick<LatchkeyDeps, 'settings' | 'mailer' | 'templates' | 'clock'>,
  user: User,
  template: string,
  client: ClientInfo,
  context: Record<string, unknown> = {},
): Promise<MailOutcome> {
  if (user.email === '') return { status: 'skipped' };
  const at = deps.clock.now();
  try {
    await sendAccountEmail(deps, {
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
    return { status: 'sent' };
  } catch (error) {
    return { status: 'failed', error };
  }
}
