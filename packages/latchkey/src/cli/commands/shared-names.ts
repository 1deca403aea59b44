// Names a command's declaration (its help) and its work (<name>.run.ts) both use, kept apart from
// both so that neither imports the other: the declaration loads its work only when it runs.

/** Where `createsuperuser --noinput` takes the password from: an environment variable, never the command line. */
export const SUPERUSER_PASSWORD_VARIABLE = 'LATCHKEY_SUPERUSER_PASSWORD';

/** Where `socialapp add` reads the client secret from when no one is there to type it. */
export const SOCIALAPP_SECRET_VARIABLE = 'LATCHKEY_SOCIALAPP_SECRET';

/** How long a mail the outbox gave up on stays listed (without its body) for the operator. */
export const ABANDONED_MAIL_KEPT_DAYS = 30;
