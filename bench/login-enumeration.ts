/**
 * Account enumeration by timing. Each journey that must not tell whether an address or account
 * exists is run on both sides, interleaved, on the real pages (and the headless app API) through
 * inject(), and each side's times are compared by a two-sided Mann-Whitney U test:
 *
 * - login: a wrong password for an unknown user, a known, an unverified, an inactive and a
 *   social-only account;
 * - signup: a registered address against a new one (page and headless);
 * - password reset request: a known address against an unknown one (page and headless);
 * - login by code, asking for a code: a known address against an unknown one (page and headless);
 * - email page: adding an address another account has verified against a free one.
 *
 * The site is set up in enumeration/site.ts (production settings, mandatory verification, a SQLite
 * file, mail over SMTP to a local server). Pass: every median within 10% and every p > 0.01; any
 * difference sets a non-zero exit code. Options: `--trials=<n>` samples per group (default 200);
 * `--only=signup,reset` runs only the named parts (login, signup, reset, code, email);
 * `--database=memory` puts SQLite in memory instead of a file, `--database=postgres` uses a schema
 * on TEST_DATABASE_URL's PostgreSQL, whose queries let other work run meanwhile (see site.ts).
 */
import { compareEmailAdds } from './enumeration/email-add.js';
import { compareLogins } from './enumeration/login.js';
import { compareLoginCodeRequests } from './enumeration/login-code.js';
import { comparePasswordResets } from './enumeration/password-reset.js';
import { compareSignups } from './enumeration/signup.js';
import { createBenchSite } from './enumeration/site.js';
import { printVerdicts, type Verdict } from './enumeration/statistics.js';

const DEFAULT_TRIALS = 200;
const WARM_UP = 10;
const DATABASE_LABELS = { file: 'SQLite file', memory: 'SQLite in memory', postgres: 'PostgreSQL (TEST_DATABASE_URL)' } as const;

/** The value of `--name=value` on the command line (run.ts passes options through). */
function option(name: string): string | undefined {
  return process.argv.find((argument) => argument.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function trialsFromArguments(): number {
  const value = Number(option('trials') ?? DEFAULT_TRIALS);
  if (!Number.isInteger(value) || value < 20) throw new Error('--trials= takes a whole number of at least 20');
  return value;
}

export async function benchmarkLoginEnumeration(): Promise<void> {
  const trials = trialsFromArguments();
  const database = option('database') ?? 'file';
  if (database !== 'file' && database !== 'memory' && database !== 'postgres') throw new Error('--database= takes file, memory or postgres');
  const site = await createBenchSite(database);
  const sampling = { trials, warmUp: WARM_UP };
  const all: Verdict[] = [];
  try {
    console.log(`${trials} attempts per group (after ${WARM_UP} thrown away), interleaved; argon2id m=19456 t=2 p=1; ${DATABASE_LABELS[database]}; mail over SMTP`);
    const sections: [string, string, string, () => Promise<Verdict[]>][] = [
      ['login', 'Login, wrong password', 'nobody', () => compareLogins(site, sampling)],
      ['signup', 'Signup, mandatory verification', 'new', () => compareSignups(site, sampling)],
      ['reset', 'Password reset request', 'unknown', () => comparePasswordResets(site, sampling)],
      ['code', 'Login by code, code request', 'unknown', () => compareLoginCodeRequests(site, sampling)],
      ['email', 'Email page, add an address', 'free', () => compareEmailAdds(site, sampling)],
    ];
    const only = option('only')?.split(',');
    for (const [part, title, reference, compare] of sections) {
      if (only !== undefined && !only.includes(part)) continue;
      const verdicts = await compare();
      for (const name of new Set(verdicts.map((verdict) => verdict.name))) {
        printVerdicts(`${title}: ${name}`, reference, verdicts.filter((verdict) => verdict.name === name));
      }
      all.push(...verdicts);
    }
  } finally {
    await site.close();
  }
  const different = all.filter((verdict) => !verdict.same);
  if (different.length > 0) {
    console.log(`\nFAILED: ${different.map((verdict) => `${verdict.name} (${verdict.label})`).join(', ')} can be told apart by timing.`);
    process.exitCode = 1;
  }
}
