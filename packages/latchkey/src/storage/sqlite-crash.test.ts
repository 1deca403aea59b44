/**
 * A process killed (SIGKILL) in the middle of a signup transaction leaves a SQLite database that is
 * intact and holds no trace of the signup: the user row written before the kill is gone, the rows
 * committed earlier are there, and the next signup succeeds. The child (sqlite-crash.child.ts) says
 * when it has written the user row and waits, so the kill always lands mid-transaction.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/database.js';
import { openDatabase } from './database.js';

const TSX = fileURLToPath(new URL('../../../../node_modules/.bin/tsx', import.meta.url));
const CHILD = fileURLToPath(new URL('./sqlite-crash.child.ts', import.meta.url));

interface MidTransactionChild {
  /** Kills the child with SIGKILL and resolves with the signal it died of. */
  kill(): Promise<NodeJS.Signals | null>;
}

/** Starts the child and resolves once it reports the user row written; rejects if it exits first. */
async function startSignupAndWaitUntilMidTransaction(filename: string, email: string, started: (child: MidTransactionChild) => void): Promise<void> {
  const child = spawn(TSX, [CHILD, filename, email], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  started({
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.split('\n').includes('ready')) resolve();
    });
    child.once('error', reject);
    void exited.then(() => reject(new Error(`the child exited before it was ready; stdout: ${stdout} stderr: ${stderr}`)));
  });
}

describe('SQLite after a process is killed mid-transaction', () => {
  let database: TestDatabase;
  let child: MidTransactionChild | undefined;
  beforeEach(async () => {
    database = await createTestDatabase('sqlite', 'email', { sqliteFile: true });
  });
  afterEach(async () => {
    // Should the test fail before its kill, no child is left behind holding the file.
    await child?.kill();
    child = undefined;
    await database.destroy();
  });

  it('keeps the file intact, drops the uncommitted signup, and keeps what was committed', async () => {
    const filename = database.openOptions.url.slice('sqlite:'.length);
    const committed = await database.store.users.create({ email: 'committed@example.com', password: '!unusable', dateJoined: new Date('2030-01-01T09:00:00Z') });

    await startSignupAndWaitUntilMidTransaction(filename, 'crashed@example.com', (started) => (child = started));
    // The child holds the write lock (its transaction began IMMEDIATE): it is mid-transaction.
    await sql`pragma busy_timeout = 0`.execute(database.kysely);
    await expect(database.store.users.create({ email: 'waiting@example.com', password: '!unusable', dateJoined: new Date('2030-01-01T09:30:00Z') })).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(await child!.kill()).toBe('SIGKILL');
    await database.close();

    const reopened = await openDatabase(database.openOptions);
    try {
      const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(reopened.kysely);
      expect(integrity.rows).toEqual([{ integrity_check: 'ok' }]);
      const foreignKeys = await sql`pragma foreign_key_check`.execute(reopened.kysely);
      expect(foreignKeys.rows).toEqual([]);

      expect(await reopened.store.users.findByEmail('crashed@example.com')).toBeUndefined();
      expect(await reopened.store.users.findById(committed.id)).toEqual(committed);
      expect(await reopened.store.users.count()).toBe(1);
      // The killed process held the write lock; it is free again, and the signup can be retried.
      const retried = await reopened.store.transaction(async (repositories) => {
        const user = await repositories.users.create({ email: 'crashed@example.com', password: '!unusable', dateJoined: new Date('2030-01-01T10:00:00Z') });
        await repositories.emailAddresses.add({ userId: user.id, email: user.email, verified: false, primary: true });
        return user;
      });
      expect(await reopened.store.users.findByEmail('crashed@example.com')).toEqual(retried);
    } finally {
      await reopened.close();
    }
  });
});
