/**
 * Password reset request: a known and an unknown address must get the same answer in the same
 * time (SECURITY-TESTS.md, item 2), through the reset page and the headless app API.
 */
import { createUser } from '../../packages/latchkey/src/account/users.js';
import type { BenchSite } from './site.js';
import { PASSWORD, timed } from './site.js';
import { expectAnswer, sampleInterleaved, type SamplingOptions } from './sampling.js';
import { judge, type Verdict } from './statistics.js';

const KNOWN = 'known@example.com';
/**
 * A reset request answers in about a millisecond, where a difference of a few percent is tens of
 * microseconds: it gets this many times the samples of the other parts, at little cost.
 */
const SAMPLE_FACTOR = 5;
const UNKNOWN = 'nobody@example.com';

export async function comparePasswordResets(site: BenchSite, options: Omit<SamplingOptions, 'settle'>): Promise<Verdict[]> {
  await createUser(site.latchkey.deps, { username: 'known', email: KNOWN, password: PASSWORD, emailVerified: true });
  const browser = site.browser();
  await browser.get('/accounts/password/reset/');
  const page = (label: string, email: string) => ({
    label,
    async run() {
      const { ms, value } = await timed(() => browser.postForm('/accounts/password/reset/', { email }));
      expectAnswer(`reset page (${label})`, value, 302, '/accounts/password/reset/done/');
      return ms;
    },
  });
  const api = (label: string, email: string) => ({
    label,
    async run() {
      const { ms, value } = await timed(() => browser.postJson('/_allauth/app/v1/auth/password/request', { email }));
      expectAnswer(`headless reset (${label})`, value, 200);
      return ms;
    },
  });
  const verdicts: Verdict[] = [];
  for (const [name, probe] of [
    ['reset page', page],
    ['headless app reset', api],
  ] as const) {
    const times = await sampleInterleaved([probe('unknown', UNKNOWN), probe('known', KNOWN)], { ...options, trials: options.trials * SAMPLE_FACTOR, settle: site.settle });
    verdicts.push(judge({ name, reference: { label: 'unknown', times: times.get('unknown')! }, other: { label: 'known', times: times.get('known')! } }));
  }
  if (site.smtp.messages.length === 0) throw new Error('no reset mail reached the SMTP server: the known address was not reached');
  return verdicts;
}
