/**
 * Adding an address on the email page: one another account has verified must get the same answer,
 * in the same time, as a free one (SECURITY-TESTS.md, item 3). The added row is taken away again
 * after each attempt, outside the timing, so that the account never reaches its address limit and
 * every attempt starts from the same state.
 */
import { createUser } from '../../packages/latchkey/src/account/users.js';
import type { BenchSite } from './site.js';
import { PASSWORD, timed } from './site.js';
import { expectAnswer, sampleInterleaved, type SamplingOptions } from './sampling.js';
import { judge, type Verdict } from './statistics.js';

const EMAIL_PAGE = '/accounts/email/';
const OWNED = 'owner@example.com';
const FREE = 'free@example.com';

export async function compareEmailAdds(site: BenchSite, options: Omit<SamplingOptions, 'settle'>): Promise<Verdict[]> {
  const { deps } = site.latchkey;
  const adder = await createUser(deps, { username: 'adder', email: 'adder@example.com', password: PASSWORD, emailVerified: true });
  await createUser(deps, { username: 'owner', email: OWNED, password: PASSWORD, emailVerified: true });
  const browser = site.browser();
  await browser.get('/accounts/login/');
  expectAnswer('login as adder', await browser.postForm('/accounts/login/', { login: 'adder', password: PASSWORD }), 302);

  const add = (label: string, email: string) => ({
    label,
    async run() {
      const { ms, value } = await timed(() => browser.postForm(EMAIL_PAGE, { action_add: '', email }));
      expectAnswer(`add ${label} address`, value, 302, EMAIL_PAGE);
      // Untimed: the page shows (and so drops) the flashed message, and the address goes again.
      await browser.get(EMAIL_PAGE);
      const added = await deps.store.emailAddresses.findForUser(adder.id, email);
      if (!added) throw new Error(`the ${label} address was not added`);
      await deps.store.emailAddresses.remove(added.id);
      return ms;
    },
  });
  const times = await sampleInterleaved([add('free', FREE), add('owned', OWNED)], { ...options, settle: site.settle });
  return [judge({ name: 'email page, add address', reference: { label: 'free', times: times.get('free')! }, other: { label: 'owned elsewhere', times: times.get('owned')! } })];
}
