export { createMailer, type CreateMailerOptions } from './create-mailer.js';
export { ConsoleMailer, formatEmailForConsole } from './console-mailer.js';
export { MemoryMailer } from './memory-mailer.js';
export { prepareEmail } from './message.js';
export { type EmailMessage, type MailOutbox, type MailOutboxRepository, type MailOutcome, type Mailer, type OutboxEntry, type OutboxMail, type SentEmail } from './ports.js';
export { DEFAULT_SMTP_TIMEOUTS, SmtpMailer, type SmtpMailerOptions, type SmtpTimeouts } from './smtp-mailer.js';
export { DEFAULT_MAIL_OUTBOX_POLICY, MailOutboxSender, type MailOutboxPolicy, type MailOutboxSenderOptions } from './outbox-sender.js';
