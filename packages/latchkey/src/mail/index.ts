export { createMailer, type CreateMailerOptions } from './create-mailer.js';
export { ConsoleMailer, formatEmailForConsole } from './console-mailer.js';
export { parseEmailUrl, type EmailBackendConfig } from './email-url.js';
export { MemoryMailer } from './memory-mailer.js';
export { prepareEmail, type EmailMessage, type Mailer, type SentEmail } from './message.js';
export { DEFAULT_SMTP_TIMEOUTS, SmtpMailer, type SmtpMailerOptions, type SmtpTimeouts } from './smtp-mailer.js';
