/**
 * The child process of sqlite-crash.test.ts: opens the SQLite file named on the command line and
 * begins a signup transaction for the email given, inserts the user row, writes "ready" on stdout
 * and then waits, with the transaction open, to be killed before the email row and the commit. It
 * never commits: should the parent go away instead (stdin closes), it leaves without committing.
 */
import { sql } from 'kysely';
import { openDatabase } from './database.js';

async function signUpAndWait(filename: string, email: string): Promise<void> {
  const database = await openDatabase({ url: `sqlite:${filename}`, usernameType: 'email' });
  // A tiny page cache makes SQLite spill the uncommitted pages into the WAL file before the kill,
  // so the reopened database must recognize and ignore frames that no commit completed (otherwise
  // the row would only ever have lived in this process's memory).
  await sql`pragma cache_size = 1`.execute(database.kysely);
  await sql`pragma cache_spill = 1`.execute(database.kysely);
  await database.store.transaction(async (repositories) => {
    await repositories.users.create({ email, password: '!unusable', dateJoined: new Date('2030-01-01T10:00:00Z') });
    process.stdout.write('ready\n');
    await new Promise<never>(() => {
      process.stdin.on('end', () => process.exit(3));
      process.stdin.resume();
    });
  });
}

const [filename, email] = process.argv.slice(2);
if (filename === undefined || email === undefined) {
  process.stderr.write('usage: sqlite-crash.child.ts DATABASE_FILE EMAIL\n');
  process.exit(2);
}
signUpAndWait(filename, email).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
