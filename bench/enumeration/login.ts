/**
 * Login: a wrong password for an unknown user, a known user, an unverified, an inactive and a
 * social-only (no password) account must take the same time (SECURITY-TESTS.md, item 1).
 */
import { createUser } from '../../packages/latchkey/src/account/users.js';
import type { BenchSite } from './site.js';
import { PASSWORD, timed } from './site.js';
import { expectAnswer, sampleInterleaved, type SamplingOptions } from './sampling.js';
import { judge, type Verdict } from './statistics.js';

const GROUPS = ['nobody', 'ada', 'unverified', 'inactive', 'social'] as const;

export async function compareLogins(site: BenchSite, options: Omit<SamplingOptions, 'settle'>): Promise<Verdict[]> {
  const { deps } = site.latchkey;
  await createUser(deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
  await createUser(deps, { username: 'unverified', email: 'u@example.com', password: PASSWORD, emailVerified: false });
  const inactive = await createUser(deps, { username: 'inactive', email: 'i@example.com', password: PASSWORD, emailVerified: true });
  await deps.store.users.update(inactive.id, { isActive: false });
  await createUser(deps, { username: 'social', email: 's@example.com', password: null, emailVerified: true });
  const browser = site.browser();
  await browser.get('/accounts/login/');

  const probes = GROUPS.map((login) => ({
    label: login,
    async run() {
      const { ms, value } = await timed(() => browser.postForm('/accounts/login/', { login, password: 'wrong password' }));
      expectAnswer(`login as ${login}`, value, 400);
      return ms;
    },
  }));
  const times = await sampleInterleaved(probes, { ...options, settle: site.settle });
  const reference = { label: 'nobody', times: times.get('nobody')! };
  return GROUPS.filter((group) => group !== 'nobody').map((group) =>
    judge({ name: 'login page, wrong password', reference, other: { label: group, times: times.get(group)! } }),
  );
}
