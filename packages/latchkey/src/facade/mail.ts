import { commitChange, deliverMail } from '../account/changes.js';
import { mailLanguage, renderAccountEmail } from '../account/emails.js';
import type { LatchkeyDeps } from '../deps.js';
import type { MailOutcome } from '../mail/ports.js';

/** A mail of the project's own, from its templates. */
export interface ProjectMail {
  /**
   * The templates' common start: `<template>_subject.txt`, `<template>_message.txt` and
   * `<template>_message.html`, looked up in the project's template folders first.
   */
  template: string;
  to: string;
  /** What the templates read, beside `site_name` and `site_url`. */
  context?: Record<string, unknown>;
  /**
   * The language to write it in (a code of LANGUAGES); by default the recipient's, when `user`
   * is given and chose one, else LANGUAGE_CODE (docs/translations.md).
   */
  language?: string;
  /** The user the mail is for, whose chosen language it is written in. */
  user?: { language: string };
}

/** The project's way to send mail as Latchkey sends its own (allauth's adapter.send_mail). */
export interface LatchkeyMail {
  /**
   * Renders the mail (the subject gets ACCOUNT_EMAIL_SUBJECT_PREFIX), writes it to the outbox and
   * sends it: 'sent', or 'failed' with the error, and then the outbox's sweep tries again later.
   */
  send(mail: ProjectMail): Promise<MailOutcome>;
  /** Sends now whatever the outbox holds that is due (a test moves its clock, then sweeps); how many were sent. */
  sweepOutbox(): Promise<number>;
}

export function mailOf(deps: LatchkeyDeps): LatchkeyMail {
  return {
    async send(mail) {
      const language = mailLanguage(deps, mail.user, mail.language === undefined ? undefined : { language: mail.language });
      const message = renderAccountEmail(deps, { template: mail.template, to: mail.to, language, context: mail.context ?? {} });
      const queued = await commitChange(deps, (change) => change.queueMail(message));
      return deliverMail(deps, queued);
    },
    sweepOutbox: () => deps.mailOutbox.sweep(),
  };
}
