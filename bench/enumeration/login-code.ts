/**
 * Login by a mailed code: asking for a code for a known and for an unknown address must get the
 * same answer in the same time (docs/accounts.md, login by code), through the request page and
 * the headless app API. Only the known address gets a mail, so the SMTP server must receive it.
 */
import { createUser } from '../../packages/latchkey/src/account/users.js';
import type { BenchSite } from './site.js';
import { PASSWORD, timed } from './site.js';
import { expectAnswer, sampleInterleaved, type SamplingOptions } from './sampling.js';
import { judge, type Verdict } from './statistics.js';

const KNOWN = 'coded@example.com';
const UNKNOWN = 'nobody-coded@example.com';
const REQUEST_PAGE = '/accounts/login/code/';
const CONFIRM_PAGE = '/accounts/login/code/confirm/';
/** As the reset parts: a request answers in a few milliseconds, so a small difference needs more samples. */
const SAMPLE_FACTOR = 5;

export async function compareLoginCodeRequests(site: BenchSite, options: Omit<SamplingOptions, 'settle'>): Promise<Verdict[]> {
  await createUser(site.latchkey.deps, { username: 'coded', email: KNOWN, password: PASSWORD, emailVerified: true });
  const browser = site.browser();
  await browser.get(REQUEST_PAGE);
  const page = (label: string, email: string) => ({
    label,
    async run() {
      const { ms, value } = await timed(() => browser.postForm(REQUEST_PAGE, { email }));
      expectAnswer(`login code page (${label})`, value, 302, CONFIRM_PAGE);
      return ms;
    },
  });
  // Each app request starts without a session token, so each one makes a session, on both sides.
  const api = (label: string, email: string) => ({
    label,
    async run() {
      const { ms, value } = await timed(() => browser.postJson('/_allauth/app/v1/auth/code/request', { email }));
      expectAnswer(`headless login code (${label})`, value, 401);
      return ms;
    },
  });
  const verdicts: Verdict[] = [];
  for (const [name, probe] of [
    ['login code page', page],
    ['headless app login code', api],
  ] as const) {
    const mailedBefore = mailsTo(site, KNOWN);
    const sampling = { ...options, trials: options.trials * SAMPLE_FACTOR, settle: site.settle };
    const times = await sampleInterleaved([probe('unknown', UNKNOWN), probe('known', KNOWN)], sampling);
    // Every known attempt, warm-up included, mails a code (settle waits for it): a known address
    // that was not reached would make this a comparison of two unknown ones.
    const mailed = mailsTo(site, KNOWN) - mailedBefore;
    const attempts = sampling.warmUp + sampling.trials;
    if (mailed !== attempts) throw new Error(`${name}: the SMTP server received ${mailed} login codes for the known address in ${attempts} attempts`);
    verdicts.push(judge({ name, reference: { label: 'unknown', times: times.get('unknown')! }, other: { label: 'known', times: times.get('known')! } }));
  }
  if (mailsTo(site, UNKNOWN) > 0) throw new Error('a login code was mailed to the unknown address');
  return verdicts;
}

function mailsTo(site: BenchSite, address: string): number {
  return site.smtp.messages.filter((message) => message.envelope.to.includes(address)).length;
}
