/**
 * A process killed after a signup's transaction has committed and before its confirmation mail
 * left (the child, testing/signup-crash.child.ts, dies by SIGKILL inside the mail server's send):
 * after a restart the account, its user_signed_up record and its mail are all there, and the mail
 * goes out once the dead process's claim on it has lapsed. On every database.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../core/clock.js';
import { createLatchkey, type Latchkey } from '../../latchkey.js';
import { MemoryMailer } from '../../mail/index.js';
import { openDatabase } from '../../storage/database.js';
import { createTestDatabase, testDatabaseKinds, type TestDatabase } from '../../testing/database.js';
import { testSettings } from '../../testing/latchkey.js';
import { confirmEmail } from '../email-confirmation.js';

const CHILD = fileURLToPath(new URL('../../testing/signup-crash.child.ts', import.meta.url));
const SIGNED_UP_AT = '2030-01-01T00:00:00.000Z';
/** Past the dead process's claim (DEFAULT_MAIL_OUTBOX_POLICY.claimMs, five minutes). */
const RESTARTED_AT = '2030-01-01T00:06:00.000Z';

/** Runs the child to its death; resolves with the signal that ended it and what it wrote to stderr. */
function signUpAndDie(database: TestDatabase, email: string, secretKey: string): Promise<{ signal: NodeJS.Signals | null; stderr: string }> {
  // node itself, with tsx as a loader, not tsx's command (which runs node as its own child and
  // reports that child's death as an exit code): the signal must reach this process's handler.
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(database.openOptions), email, SIGNED_UP_AT], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LATCHKEY_SECRET_KEY: secretKey },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ signal, stderr: `exit code ${code}: ${stderr}` }));
  });
}

describe.each(testDatabaseKinds())('a signup whose process dies before its mail is sent, on %s', (kind) => {
  let database: TestDatabase | undefined;
  let latchkey: Latchkey | undefined;
  afterEach(async () => {
    await latchkey?.close();
    await database?.destroy();
    latchkey = undefined;
    database = undefined;
  });

  it('keeps the account, its record and its mail, and sends the mail after the restart', async () => {
    database = await createTestDatabase(kind, 'username', { sqliteFile: true });
    const secretKey = randomBytes(32).toString('hex');
    const died = await signUpAndDie(database, 'ada@example.com', secretKey);
    expect(died, died.stderr).toMatchObject({ signal: 'SIGKILL' });

    const settings = testSettings({ env: { LATCHKEY_SECRET_KEY: secretKey }, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    const mailer = new MemoryMailer({ defaultFrom: settings.DEFAULT_FROM_EMAIL });
    const reopened = await openDatabase(database.openOptions);
    latchkey = await createLatchkey({ settings, clock: new ManualClock(RESTARTED_AT), mailer, database: reopened, migrations: 'require' });
    const user = await latchkey.deps.store.users.findByUsername('ada');
    expect(user).toBeDefined();
    expect((await latchkey.deps.store.auditLog.listForUser(user!.id)).map((record) => record.event)).toEqual(['email_confirmation_sent', 'user_signed_up']);

    // The start-up sweep found the mail the dead process had claimed, its claim lapsed, and sent it.
    await latchkey.deps.background.idle();
    expect(mailer.outbox.map((mail) => mail.to)).toEqual([['ada@example.com']]);
    expect(await latchkey.deps.store.mailOutbox.list()).toEqual([]);
    const key = /\/accounts\/confirm-email\/([^/\s]+)\//.exec(mailer.outbox[0]!.text)?.[1];
    expect(await confirmEmail(latchkey.deps, key, { ip: '203.0.113.7', userAgent: 'vitest' })).toMatchObject({ userId: user!.id, verified: true });
  });
});
