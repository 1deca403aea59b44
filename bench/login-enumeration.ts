/**
 * Account enumeration by login timing: a wrong password for an unknown user, a known user, an
 * unverified, an inactive and a social-only (no password) account must take the same time, so
 * timing does not tell which accounts exist. Runs the real login page through inject() with real
 * argon2id (OWASP's minimum parameters, m=19456 t=2 p=1, to keep the run short), 200 trials each,
 * interleaved, and compares each group's times with the unknown user's by a two-sided
 * Mann-Whitney U test. Pass: every median within 10% and every p > 0.01.
 */
import { createUser } from '../packages/latchkey/src/index.js';
import { createTestLatchkey } from '../packages/latchkey/src/testing/latchkey.js';
import { PageClient } from '../packages/latchkey/src/testing/pages.js';

const TRIALS = 200;
const GROUPS = ['nobody', 'ada', 'unverified', 'inactive', 'social'] as const;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 0 ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[middle]!;
}

/** Two-sided p-value of the Mann-Whitney U test, by the normal approximation with tie correction. */
function mannWhitneyP(a: number[], b: number[]): number {
  const all = [...a.map((value) => ({ value, group: 0 })), ...b.map((value) => ({ value, group: 1 }))].sort((x, y) => x.value - y.value);
  const ranks = new Array<number>(all.length);
  let tieTerm = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.value === all[i]!.value) j++;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[k] = rank;
    const t = j - i + 1;
    tieTerm += t ** 3 - t;
    i = j + 1;
  }
  const rankSumA = all.reduce((sum, item, index) => (item.group === 0 ? sum + ranks[index]! : sum), 0);
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n1 + n2 + 1 - tieTerm / ((n1 + n2) * (n1 + n2 - 1)));
  const z = Math.abs(u - mean) / Math.sqrt(variance);
  // Two-sided tail of the standard normal (Abramowitz-Stegun 7.1.26 for erfc).
  const t = 1 / (1 + 0.3275911 * (z / Math.SQRT2));
  const erfc = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * Math.exp(-((z / Math.SQRT2) ** 2));
  return erfc;
}

export async function benchmarkLoginEnumeration(): Promise<void> {
  const latchkey = await createTestLatchkey({
    settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', ACCOUNT_RATE_LIMITS: false, ARGON2_MEMORY_COST: 19_456, ARGON2_TIME_COST: 2, ARGON2_PARALLELISM: 1 },
  });
  const browser = await PageClient.create(latchkey);
  try {
    const password = 'a long enough passphrase';
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password, emailVerified: true });
    await createUser(latchkey.deps, { username: 'unverified', email: 'u@example.com', password, emailVerified: false });
    const inactive = await createUser(latchkey.deps, { username: 'inactive', email: 'i@example.com', password, emailVerified: true });
    await latchkey.deps.store.users.update(inactive.id, { isActive: false });
    await createUser(latchkey.deps, { username: 'social', email: 's@example.com', password: null, emailVerified: true });
    await browser.get('/accounts/login/');

    const times = new Map<string, number[]>(GROUPS.map((group) => [group, []]));
    for (let trial = 0; trial < TRIALS; trial++) {
      for (const login of GROUPS) {
        const started = process.hrtime.bigint();
        const response = await browser.post('/accounts/login/', { login, password: 'wrong password' });
        times.get(login)!.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (response.statusCode !== 400) throw new Error(`unexpected status ${response.statusCode} for ${login}`);
      }
    }
    const reference = times.get('nobody')!;
    console.log(`${TRIALS} wrong-password logins per group, argon2id m=19456 t=2 p=1\n`);
    console.log('group        median ms  vs unknown  Mann-Whitney p  verdict');
    for (const group of GROUPS) {
      const values = times.get(group)!;
      const ratio = median(values) / median(reference);
      const p = group === 'nobody' ? 1 : mannWhitneyP(values, reference);
      const ok = Math.abs(ratio - 1) <= 0.1 && p > 0.01;
      console.log(`${group.padEnd(12)} ${median(values).toFixed(2).padStart(9)}  ${ratio.toFixed(3).padStart(10)}  ${p.toFixed(3).padStart(14)}  ${ok ? 'same' : 'DIFFERENT'}`);
    }
  } finally {
    await browser.close();
    await latchkey.destroy();
  }
}
