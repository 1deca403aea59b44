import type { LatchkeyDeps } from '../deps.js';
import type { EmailMessage } from '../mail/ports.js';
import type { User } from './model.js';
import type { ClientInfo } from '../core/client.js';
import { accountUrl, siteUrl } from './urls.js';
import { firstSupported } from '../core/i18n/languages.js';

export type { MailOutcome } from '../mail/ports.js';

export interface AccountEmail {
  template: string;
  to: string;
  context: Record<string, unknown>;
  /** The recipient's language (mailLanguage): the mail is rendered in it, whoever or whatever sends it. */
  language: string;
}

/**
 * The language of a mail to `recipient`: the language they chose, else the language of the
 * request they made themselves (a French signup's verification mail), else LANGUAGE_CODE. A mail
 * someone else causes (staff removing an authenticator) passes no client, so it never takes the
 * sender's language.
 */
export function mailLanguage(deps: Pick<LatchkeyDeps, 'settings'>, recipient: Pick<User, 'language'> | undefined, client?: Pick<ClientInfo, 'language'>): string {
  const { LANGUAGES, LANGUAGE_CODE } = deps.settings;
  return firstSupported([recipient?.language, client?.language, LANGUAGE_CODE], LANGUAGES) ?? (LANGUAGES[0] as string);
}

/**
 * Renders one account email from its templates: `<name>_subject.txt`, `<name>_message.txt` and
 * `<name>_message.html` (a project overrides any of them by path). The subject gets the prefix
 * (ACCOUNT_EMAIL_SUBJECT_PREFIX, by default "[Site name] ") and is kept to one line; links in the
 * context are built by the caller from settings (account/urls.ts), never from the request's Host header.
 * A mail that goes with a change of stored state is queued in the change's transaction
 * (account/changes.ts); one that changes nothing (a reset link, a sign-in code) is sent at once.
 */
export function renderAccountEmail(deps: Pick<LatchkeyDeps, 'settings' | 'templates' | 'adapter' | 'catalogs'>, input: AccountEmail): EmailMessage {
  const { settings, templates } = deps;
  const translator = deps.catalogs.translator(input.language);
  const context = { site_name: settings.SITE_NAME, site_url: settings.SITE_URL, ...input.context };
  const message = deps.adapter.renderMail({ template: input.template, to: input.to, context }, (name, values) => templates.render(name, values, translator));
  // One line, whatever the template or the adapter made of it: a line break in a subject would start a header.
  return { ...message, subject: message.subject.replace(/\s+/g, ' ').trim() };
}

/** Renders and sends an account email at once; a delivery failure throws LatchkeyError('mail_failed'). */
export async function sendAccountEmail(deps: Pick<LatchkeyDeps, 'settings' | 'mailer' | 'templates' | 'adapter' | 'catalogs'>, input: AccountEmail): Promise<void> {
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
  deps: Pick<LatchkeyDeps, 'settings' | 'templates' | 'clock' | 'adapter' | 'catalogs'>,
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
    language: mailLanguage(deps, user, client),
    context: {
      user,
      ip: client.ip,
      user_agent: client.userAgent,
      // A Date: the templates write it as the recipient's language does (`| date`).
      timestamp: at,
      password_reset_url: accountUrl(deps.settings, 'account_reset_password'),
      ...context,
    },
  });
}
