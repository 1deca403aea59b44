/**
 * Signup under mandatory verification: an address that already has an account must get the same
 * answer, in the same time, as a new one (SECURITY-TESTS.md, item 3). Through the signup page (a
 * new browser each attempt, as an attacker's script would be) and the headless app API.
 */
import { createUser } from '../../packages/latchkey/src/account/users.js';
import type { BenchSite } from './site.js';
import { PASSWORD, timed } from './site.js';
import { expectAnswer, sampleInterleaved, type SamplingOptions } from './sampling.js';
import { judge, type Verdict } from './statistics.js';

const REGISTERED = 'member@example.com';
const VERIFICATION_SENT_PAGE = '/accounts/confirm-email/';
const HEADLESS_SIGNUP = '/_allauth/app/v1/auth/signup';

export async function compareSignups(site: BenchSite, options: Omit<SamplingOptions, 'settle'>): Promise<Verdict[]> {
  await createUser(site.latchkey.deps, { username: 'member', email: REGISTERED, password: PASSWORD, emailVerified: true });
  // Every attempt a new username, so that only the address differs between the two groups.
  const pageSignup = (label: string, email: (trial: number) => string) => ({
    label,
    async run(trial: number) {
      const browser = site.browser();
      await browser.get('/accounts/signup/');
      const fields = { username: `${label}page${trial}`, email: email(trial), password1: PASSWORD, password2: PASSWORD };
      const { ms, value } = await timed(() => browser.postForm('/accounts/signup/', fields));
      expectAnswer(`signup page (${label})`, value, 302, VERIFICATION_SENT_PAGE);
      return ms;
    },
  });
  const apiSignup = (label: string, email: (trial: number) => string) => ({
    label,
    async run(trial: number) {
      const body = { username: `${label}api${trial}`, email: email(trial), password: PASSWORD };
      const { ms, value } = await timed(() => site.browser().postJson(HEADLESS_SIGNUP, body));
      // 401 with the pending verify_email flow: allauth's answer to a signup that must be verified.
      expectAnswer(`headless signup (${label})`, value, 401);
      return ms;
    },
  });
  const verdicts: Verdict[] = [];
  for (const [name, door, probe] of [
    ['signup page', 'page', pageSignup],
    ['headless app signup', 'api', apiSignup],
  ] as const) {
    const newAddress = probe('new', (trial) => `new-${door}${trial}@example.com`);
    const registered = probe('registered', () => REGISTERED);
    const times = await sampleInterleaved([newAddress, registered], { ...options, settle: site.settle });
    verdicts.push(judge({ name, reference: { label: 'new', times: times.get('new')! }, other: { label: 'registered', times: times.get('registered')! } }));
  }
  return verdicts;
}
