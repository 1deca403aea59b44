/**
 * What a page costs to render, in the server's own process: GET through inject() (no socket, so
 * the figure is Latchkey's work alone: session, user, template, translation) of the login page as
 * a stranger, the email page signed in, and the admin's index as a superuser, in English, French
 * and Arabic (Accept-Language). Production's settings, so templates are compiled once and cached,
 * as a deployed site's are. Mean microseconds per request over RUNS requests after a warm-up, each
 * page and language in turn, three rounds, the best round kept (the machine's noise only adds).
 *
 * The goal (issue 34): translation costs a page no more than 5% over the same page before it;
 * docs/performance.md has the figures of both, measured in the same run of this file on the two
 * trees. The file uses nothing newer than that comparison needs, so it runs on the older tree too.
 */
import { cpus, loadavg } from 'node:os';
import { createUser } from '../packages/latchkey/src/account/users.js';
import { createTestLatchkey, PRODUCTION_TEST_ENV } from '../packages/latchkey/src/testing/latchkey.js';
import { PageClient } from '../packages/latchkey/src/testing/pages.js';

const RUNS = 2000;
const WARM_UP = 300;
const ROUNDS = 3;
const PASSWORD = 'a long enough passphrase';
const LANGUAGES = ['en', 'fr', 'ar'];

async function meanMicros(client: PageClient, path: string, language: string): Promise<number> {
  const headers = { 'accept-language': language };
  for (let i = 0; i < WARM_UP; i++) await client.get(path, headers);
  const started = process.hrtime.bigint();
  for (let i = 0; i < RUNS; i++) {
    const response = await client.get(path, headers);
    if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}.`);
  }
  return Number(process.hrtime.bigint() - started) / 1000 / RUNS;
}

export async function benchmarkPages(): Promise<void> {
  const latchkey = await createTestLatchkey({ env: { ...PRODUCTION_TEST_ENV } });
  try {
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true, isStaff: true, isSuperuser: true });
    const stranger = await PageClient.create(latchkey, { waitForBackground: false });
    const ada = stranger.another();
    const login = await ada.post('/accounts/login/', { login: 'ada', password: PASSWORD });
    if (login.statusCode !== 302) throw new Error(`The login answered ${login.statusCode}.`);
    const pages = [
      { name: 'login page, stranger', client: stranger, path: '/accounts/login/' },
      { name: 'email page, signed in', client: ada, path: '/accounts/email/' },
      { name: 'admin index, superuser', client: ada, path: '/admin/' },
    ];
    console.log(`${cpus().length} cores, load ${loadavg()[0]?.toFixed(2)}; mean µs per request over ${RUNS} requests, best of ${ROUNDS} rounds\n`);
    const best = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const page of pages) {
        for (const language of LANGUAGES) {
          const key = `${page.name}|${language}`;
          const micros = await meanMicros(page.client, page.path, language);
          best.set(key, Math.min(best.get(key) ?? Infinity, micros));
        }
      }
    }
    console.log(['page'.padEnd(24), ...LANGUAGES.map((language) => language.padStart(8))].join(''));
    for (const page of pages) console.log([page.name.padEnd(24), ...LANGUAGES.map((language) => best.get(`${page.name}|${language}`)!.toFixed(0).padStart(8))].join(''));
    await stranger.close();
  } finally {
    await latchkey.destroy();
  }
}
