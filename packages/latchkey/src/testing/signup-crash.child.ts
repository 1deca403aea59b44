/**
 * The child process of account/flows/signup-crash.test.ts: signs up the address given on the
 * command line, on the database given (openDatabase's options as JSON), and dies by SIGKILL the
 * moment the first mail would leave, that is after the signup's transaction has committed and
 * before any mail is sent. Its clock stands at the instant given, so the parent can follow the
 * link the mail will carry without reading the wall clock.
 */
import { signup } from '../account/flows/signup.js';
import { ManualClock } from '../core/clock.js';
import { createLatchkey } from '../latchkey.js';
import type { Mailer } from '../mail/ports.js';
import { openDatabase, type OpenDatabaseOptions } from '../storage/database.js';
import { testSettings } from './latchkey.js';

const PASSWORD = 'a long enough passphrase';

/** Where the process dies: after the commit, where the mail server would be handed the message. */
const dyingMailer: Mailer = {
  send() {
    process.kill(process.pid, 'SIGKILL');
    return new Promise<void>(() => undefined);
  },
  close: () => Promise.resolve(),
};

async function signUpAndDie(options: OpenDatabaseOptions, email: string, at: string): Promise<void> {
  // The parent's secret key (from the environment, not the command line), so its links are valid there.
  const secretKey = process.env.LATCHKEY_SECRET_KEY ?? '';
  const settings = testSettings({ usernameType: options.usernameType, env: { LATCHKEY_SECRET_KEY: secretKey }, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
  const database = await openDatabase(options);
  const latchkey = await createLatchkey({ settings, clock: new ManualClock(at), mailer: dyingMailer, database, migrations: 'require' });
  await signup(latchkey.deps, { email, username: email.split('@')[0]!, password1: PASSWORD, password2: PASSWORD, client: { ip: '203.0.113.7', userAgent: 'crash' } });
  process.stderr.write('the signup returned: the mail was never tried\n');
  process.exit(4);
}

const [options, email, at] = process.argv.slice(2);
if (options === undefined || email === undefined || at === undefined) {
  process.stderr.write('usage: signup-crash.child.ts OPEN_DATABASE_OPTIONS_JSON EMAIL ISO_INSTANT\n');
  process.exit(2);
}
signUpAndDie(JSON.parse(options) as OpenDatabaseOptions, email, at).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
