import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { LatchkeyError } from '../errors.js';
import type { CounterStore } from './counter-store.js';
import { createRateLimiter, RateLimitedError, type RateLimitDecision } from './rate-limiter.js';
import { counterStoreKinds, createTestCounterStore, recordingStore, type TestCounterStore } from '../../testing/counter-stores.js';

const ALLOWED: RateLimitDecision = { allowed: true, retryAfterSeconds: 0 };
const IP = '203.0.113.7';
const FIVE = [1, 2, 3, 4, 5];

/** A store that fails the test if it is touched at all. */
const untouchableStore: CounterStore = {
  countWithinLimits: () => Promise.reject(new Error('the store must not be used')),
  decrement: () => Promise.reject(new Error('the store must not be used')),
  remove: () => Promise.reject(new Error('the store must not be used')),
  deleteExpired: () => Promise.reject(new Error('the store must not be used')),
};

describe('rate limiter configuration', () => {
  it('allows everything and stores nothing when rate limits are off', async () => {
    const limiter = createRateLimiter({ rules: false, store: untouchableStore, clock: new ManualClock() });
    for (let i = 0; i < 20; i += 1) expect(await limiter.consume('login_failed', { ip: IP, key: 'alice' })).toEqual(ALLOWED);
    await limiter.refund('login_failed', { ip: IP, key: 'alice' });
  });

  it('allows everything and stores nothing for an action without rules', async () => {
    const limiter = createRateLimiter({ rules: { signup: '1/m/ip' }, store: untouchableStore, clock: new ManualClock() });
    expect(await limiter.consume('login_failed', { ip: IP, key: 'alice' })).toEqual(ALLOWED);
    await limiter.refund('login_failed', { ip: IP, key: 'alice' });
  });

  it('refuses a bad rule when it is created, not on the first request', () => {
    expect(() => createRateLimiter({ rules: { login: '10/0m' }, store: untouchableStore, clock: new ManualClock() })).toThrow(LatchkeyError);
  });
});

for (const kind of counterStoreKinds()) {
  describe(`rate limiter on ${kind}`, () => {
    let target: TestCounterStore;
    let clock: ManualClock;

    beforeEach(async () => {
      target = await createTestCounterStore(kind);
      // Ten seconds into a minute, so a 60-second window has 50 seconds left.
      clock = new ManualClock('2030-01-01T00:00:10.000Z');
    });

    afterEach(async () => {
      await target.destroy();
    });

    it('limits per IP, and tells how long until the window ends', async () => {
      const limiter = createRateLimiter({ rules: { signup: '3/m/ip' }, store: target.store, clock });
      for (let i = 0; i < 3; i += 1) expect(await limiter.consume('signup', { ip: IP })).toEqual(ALLOWED);
      expect(await limiter.consume('signup', { ip: IP })).toEqual({ allowed: false, retryAfterSeconds: 50 });
      expect(await limiter.consume('signup', { ip: '198.51.100.1' })).toEqual(ALLOWED);
    });

    it('limits per key across IPs, and skips key rules when no key is given', async () => {
      const limiter = createRateLimiter({ rules: { login_failed: '100/m/ip,2/5m/key' }, store: target.store, clock });
      expect(await limiter.consume('login_failed', { ip: '198.51.100.1', key: 'alice' })).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', { ip: '198.51.100.2', key: 'alice' })).toEqual(ALLOWED);
      // The 5-minute window started at 00:00:00, so 290 seconds remain.
      expect(await limiter.consume('login_failed', { ip: '198.51.100.3', key: 'alice' })).toEqual({ allowed: false, retryAfterSeconds: 290 });
      expect(await limiter.consume('login_failed', { ip: '198.51.100.3', key: 'bob' })).toEqual(ALLOWED);
      for (let i = 0; i < 5; i += 1) expect(await limiter.consume('login_failed', { ip: '198.51.100.3' })).toEqual(ALLOWED);
    });

    it('limits per user, and skips user rules for a subject without one', async () => {
      const limiter = createRateLimiter({ rules: { change_password: '2/m/user' }, store: target.store, clock });
      expect(await limiter.consume('change_password', { ip: IP, userId: 7 })).toEqual(ALLOWED);
      expect(await limiter.consume('change_password', { ip: '198.51.100.9', userId: 7 })).toEqual(ALLOWED);
      expect((await limiter.consume('change_password', { ip: IP, userId: 7 })).allowed).toBe(false);
      expect(await limiter.consume('change_password', { ip: IP, userId: 8 })).toEqual(ALLOWED);
      for (let i = 0; i < 5; i += 1) expect(await limiter.consume('change_password', { ip: IP })).toEqual(ALLOWED);
    });

    it('keeps each action to its own counts', async () => {
      const limiter = createRateLimiter({ rules: { signup: '1/m/ip', reset_password: '1/m/ip' }, store: target.store, clock });
      expect(await limiter.consume('signup', { ip: IP })).toEqual(ALLOWED);
      expect(await limiter.consume('reset_password', { ip: IP })).toEqual(ALLOWED);
      expect((await limiter.consume('signup', { ip: IP })).allowed).toBe(false);
    });

    it('starts afresh when the clock enters the next window', async () => {
      const limiter = createRateLimiter({ rules: { signup: '2/m/ip' }, store: target.store, clock });
      await limiter.consume('signup', { ip: IP });
      await limiter.consume('signup', { ip: IP });
      clock.set('2030-01-01T00:00:59.999Z');
      expect(await limiter.consume('signup', { ip: IP })).toEqual({ allowed: false, retryAfterSeconds: 1 });
      clock.set('2030-01-01T00:01:00.000Z');
      expect(await limiter.consume('signup', { ip: IP })).toEqual(ALLOWED);
    });

    it('refuses a second attempt a moment after the first, though a window starts between them', async () => {
      const limiter = createRateLimiter({ rules: { confirm_email: '1/3m/key' }, store: target.store, clock });
      const alice = { ip: IP, key: 'alice@example.com' };
      clock.set('2030-01-01T00:02:59.000Z');
      expect(await limiter.consume('confirm_email', alice)).toEqual(ALLOWED);
      // 00:03:00 starts a window; the other set's window (00:01:30 to 00:04:30) holds both attempts.
      clock.set('2030-01-01T00:03:01.000Z');
      // The refused attempt is counted nowhere, so the wait runs to the end of the full window.
      expect(await limiter.consume('confirm_email', alice)).toEqual({ allowed: false, retryAfterSeconds: 89 });
      clock.set('2030-01-01T00:04:29.000Z');
      expect((await limiter.consume('confirm_email', alice)).allowed).toBe(false);
      clock.set('2030-01-01T00:04:30.000Z');
      expect(await limiter.consume('confirm_email', alice)).toEqual(ALLOWED);
    });

    it('refuses an attempt a second after an allowed one, and allows one a whole window after the last, wherever the windows fall', async () => {
      const limiter = createRateLimiter({ rules: { confirm_email: '1/3m/key' }, store: target.store, clock });
      const start = new Date('2030-01-01T00:00:00.000Z').getTime();
      for (let second = 0; second < 180; second += 7) {
        const subject = { ip: IP, key: `user${second}@example.com` };
        clock.set(new Date(start + second * 1000));
        expect(await limiter.consume('confirm_email', subject)).toEqual(ALLOWED);
        clock.advance(1000);
        expect((await limiter.consume('confirm_email', subject)).allowed).toBe(false);
        clock.advance(180_000);
        expect(await limiter.consume('confirm_email', subject)).toEqual(ALLOWED);
      }
    });

    it('throws rate_limited from enforce when refused, with the wait', async () => {
      const limiter = createRateLimiter({ rules: { confirm_email: '1/3m/key' }, store: target.store, clock });
      await limiter.enforce('confirm_email', { ip: IP, key: 'alice@example.com' });
      const error = await limiter.enforce('confirm_email', { ip: IP, key: 'Alice@example.com' }).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(RateLimitedError);
      expect(error).toBeInstanceOf(LatchkeyError);
      expect(error).toMatchObject({ code: 'rate_limited', action: 'confirm_email', retryAfterSeconds: 170 });
    });

    it('reports the longest wait when several rules refuse', async () => {
      const limiter = createRateLimiter({ rules: { reset_password: '1/m/ip,1/h/key' }, store: target.store, clock });
      await limiter.consume('reset_password', { ip: IP, key: 'alice@example.com' });
      expect(await limiter.consume('reset_password', { ip: IP, key: 'alice@example.com' })).toEqual({ allowed: false, retryAfterSeconds: 3590 });
    });

    it('counts a refused attempt in none of its rules, so a short limit never fills a long one', async () => {
      const limiter = createRateLimiter({ rules: { login_failed: '2/m/ip,5/d/key' }, store: target.store, clock });
      const stranger = { ip: IP, key: 'user:7' };
      expect(await limiter.consume('login_failed', stranger)).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', stranger)).toEqual(ALLOWED);
      for (let i = 0; i < 20; i += 1) expect((await limiter.consume('login_failed', stranger)).allowed).toBe(false);
      // The day's count is 2, not 22: three more attempts fit, from anywhere.
      for (let i = 0; i < 3; i += 1) expect(await limiter.consume('login_failed', { ip: `198.51.100.${i}`, key: 'user:7' })).toEqual(ALLOWED);
      expect((await limiter.consume('login_failed', { ip: '198.51.100.9', key: 'user:7' })).allowed).toBe(false);
    });

    it('counts one attempt once when two rules share a bucket, under the lower limit', async () => {
      const store = recordingStore(target.store);
      const limiter = createRateLimiter({ rules: { signup: '5/m/ip,2/m' }, store, clock });
      expect(await limiter.consume('signup', { ip: IP })).toEqual(ALLOWED);
      expect(await limiter.consume('signup', { ip: IP })).toEqual(ALLOWED);
      expect((await limiter.consume('signup', { ip: IP })).allowed).toBe(false);
      expect([...store.counts.values()]).toEqual([
        [1, 2],
        [1, 2],
      ]);
    });

    it('refunds one attempt in each bucket', async () => {
      const limiter = createRateLimiter({ rules: { login_failed: '2/m/ip,2/m/key' }, store: target.store, clock });
      const alice = { ip: IP, key: 'alice' };
      await limiter.consume('login_failed', alice);
      await limiter.refund('login_failed', alice);
      await limiter.consume('login_failed', alice);
      await limiter.refund('login_failed', alice);
      expect(await limiter.consume('login_failed', alice)).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', alice)).toEqual(ALLOWED);
      expect((await limiter.consume('login_failed', alice)).allowed).toBe(false);
    });

    it("does not reset an IP's failures when the attacker logs into their own account from it", async () => {
      const limiter = createRateLimiter({ rules: { login_failed: '3/m/ip,5/5m/key' }, store: target.store, clock });
      const victim = { ip: IP, key: 'victim@example.com' };
      const own = { ip: IP, key: 'attacker@example.com' };
      expect(await limiter.consume('login_failed', victim)).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', victim)).toEqual(ALLOWED);
      // The attacker's own, successful login: counted up front, then refunded.
      expect(await limiter.consume('login_failed', own)).toEqual(ALLOWED);
      await limiter.refund('login_failed', own);
      // The two failures still stand: one more is allowed, and then the IP is shut.
      expect(await limiter.consume('login_failed', victim)).toEqual(ALLOWED);
      expect((await limiter.consume('login_failed', victim)).allowed).toBe(false);
    });

    it('counts case, width and whitespace variants of a login against one account', async () => {
      const store = recordingStore(target.store);
      const limiter = createRateLimiter({ rules: { login_failed: '3/5m/key' }, store, clock });
      const variants = ['Alice@Example.com', ' alice@example.com ', 'ＡＬＩＣＥ@example.com', 'ALICE@EXAMPLE.COM'];
      const decisions = [];
      for (const [index, key] of variants.entries()) decisions.push(await limiter.consume('login_failed', { ip: `198.51.100.${index}`, key }));
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false]);
      // One bucket in each set of windows; each holds a hash, never the address.
      expect(store.buckets()).toHaveLength(2);
      for (const bucket of store.buckets()) {
        expect(bucket).not.toMatch(/alice|example/i);
        expect(bucket).toMatch(/^login_failed:key:300:\d+:[0-9a-f]{64}$/);
      }
    });

    it('counts every address of an IPv6 /64 together, and an IPv4-mapped address as IPv4', async () => {
      const limiter = createRateLimiter({ rules: { signup: '2/m/ip' }, store: target.store, clock });
      expect(await limiter.consume('signup', { ip: '2001:db8:1:2::1' })).toEqual(ALLOWED);
      expect(await limiter.consume('signup', { ip: '2001:db8:1:2:dead:beef:0:1' })).toEqual(ALLOWED);
      expect((await limiter.consume('signup', { ip: '2001:db8:1:2::ffff' })).allowed).toBe(false);
      expect(await limiter.consume('signup', { ip: '2001:db8:1:3::1' })).toEqual(ALLOWED);

      expect(await limiter.consume('signup', { ip: IP })).toEqual(ALLOWED);
      expect(await limiter.consume('signup', { ip: `::ffff:${IP}` })).toEqual(ALLOWED);
      expect((await limiter.consume('signup', { ip: IP })).allowed).toBe(false);
    });

    it('lets exactly `limit` of 50 parallel attempts through, and counts only those', async () => {
      const store = recordingStore(target.store);
      const limiter = createRateLimiter({ rules: { login_failed: '5/5m/key' }, store, clock });
      const decisions = await Promise.all(Array.from({ length: 50 }, (_, index) => limiter.consume('login_failed', { ip: IP, key: index % 2 === 0 ? 'victim' : 'VICTIM' })));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(5);
      expect([...store.counts.values()].map((counts) => [...counts].sort((x, y) => x - y))).toEqual([FIVE, FIVE]);
    });

    it('lets exactly the lowest limit of 50 parallel attempts through several rules, counting only those in each', async () => {
      const store = recordingStore(target.store);
      const limiter = createRateLimiter({ rules: { login_failed: '10/m/ip,5/5m/key' }, store, clock });
      const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.consume('login_failed', { ip: IP, key: 'victim' })));
      // An attempt's buckets are counted in one atomic step: all four hold the same five attempts.
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(5);
      expect([...store.counts.values()].map((counts) => [...counts].sort((x, y) => x - y))).toEqual([FIVE, FIVE, FIVE, FIVE]);
    });

    it('agrees across two instances sharing the counters', async () => {
      const first = createRateLimiter({ rules: { login_failed: '4/m/ip' }, store: target.store, clock });
      const second = createRateLimiter({ rules: { login_failed: '4/m/ip' }, store: await target.openAnother(), clock });
      const decisions = await Promise.all(Array.from({ length: 12 }, (_, index) => (index % 2 === 0 ? first : second).consume('login_failed', { ip: IP })));
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(4);
      expect((await first.consume('login_failed', { ip: IP })).allowed).toBe(false);
      expect((await second.consume('login_failed', { ip: IP })).allowed).toBe(false);
    });

    it('counts a key per IP under ip+key, so one address filling it holds back no other', async () => {
      const store = recordingStore(target.store);
      const limiter = createRateLimiter({ rules: { login_failed: '2/5m/ip+key' }, store, clock });
      const stranger = { ip: IP, key: 'user:7' };
      expect(await limiter.consume('login_failed', stranger)).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', { ip: IP, key: 'USER:7' })).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', stranger)).toEqual({ allowed: false, retryAfterSeconds: 290 });
      expect(await limiter.consume('login_failed', { ip: '198.51.100.1', key: 'user:7' })).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', { ip: IP, key: 'user:8' })).toEqual(ALLOWED);
      // An address of a /64 is the /64, as under the ip scope; and the names hold only hashes.
      expect(await limiter.consume('login_failed', { ip: '2001:db8::1', key: 'user:7' })).toEqual(ALLOWED);
      expect(await limiter.consume('login_failed', { ip: '2001:db8::2', key: 'user:7' })).toEqual(ALLOWED);
      expect((await limiter.consume('login_failed', { ip: '2001:db8::3', key: 'user:7' })).allowed).toBe(false);
      for (const bucket of store.buckets()) expect(bucket).toMatch(/^login_failed:ip\+key:300:\d+:[0-9a-f]{64}$/);
    });

    it('counts several actions as one attempt: in all of them, or, when one is full, in none', async () => {
      const limiter = createRateLimiter({ rules: { login: '3/m/ip', login_failed: '1/h/key' }, store: target.store, clock });
      const attempt = (key: string) => [
        { action: 'login' as const, subject: { ip: IP } },
        { action: 'login_failed' as const, subject: { ip: IP, key } },
      ];
      expect(await limiter.consumeTogether(attempt('alice'))).toEqual(ALLOWED);
      // alice's hour is full: the attempt is refused by it, and the IP's minute is not counted.
      expect(await limiter.consumeTogether(attempt('alice'))).toEqual({ allowed: false, retryAfterSeconds: 3590, refusedBy: 'login_failed' });
      expect(await limiter.consumeTogether(attempt('bob'))).toEqual(ALLOWED);
      expect(await limiter.consumeTogether(attempt('carol'))).toEqual(ALLOWED);
      expect(await limiter.consumeTogether(attempt('dave'))).toEqual({ allowed: false, retryAfterSeconds: 50, refusedBy: 'login' });
    });

    it("clears a subject's counts for the scopes named only", async () => {
      const limiter = createRateLimiter({ rules: { login_failed: '2/m/ip,2/h/key,2/h/ip+key' }, store: target.store, clock });
      const victim = { ip: IP, key: 'user:7' };
      await limiter.consume('login_failed', victim);
      await limiter.consume('login_failed', { ip: '198.51.100.1', key: 'user:7' });
      expect((await limiter.consume('login_failed', { ip: '198.51.100.2', key: 'user:7' })).allowed).toBe(false);
      await limiter.clear('login_failed', victim, ['key', 'ip+key']);
      expect(await limiter.consume('login_failed', { ip: '198.51.100.2', key: 'user:7' })).toEqual(ALLOWED);
      // The IP's own count stayed: one failure before, one now, and the minute is full.
      expect(await limiter.consume('login_failed', { ip: IP, key: 'user:8' })).toEqual(ALLOWED);
      expect((await limiter.consume('login_failed', { ip: IP, key: 'user:9' })).allowed).toBe(false);
    });
  });
}
