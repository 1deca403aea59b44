/**
 * The rate limits of ACCOUNT_RATE_LIMITS (allauth's actions and notation) over a CounterStore.
 *
 * An attempt is counted BEFORE the work it guards. Checking first and counting afterwards would
 * let every request that arrives while the first few are still hashing a password read the same,
 * low count: 50 parallel guesses would all pass a limit of 10. Counting up front, in one atomic
 * step per attempt, decides parallel attempts one after another, so exactly `limit` of them are
 * allowed however many arrive at once.
 *
 * A refused attempt is counted nowhere, in none of its rules: it did no work, so it must not use
 * up anyone's allowance. Were it counted, a stranger hammering a short per-IP limit would fill
 * the account's long limit behind it, and lock the account's owner out for a day from anywhere
 * (docs/accounts.md, "Rate limits").
 *
 * Each rule counts in two sets of fixed windows, the second half a window behind the first, and
 * an attempt is refused when either of its two windows is full. With one set alone, a window
 * boundary falling between two attempts a second apart would let the second through as if the
 * first had never been (a "1/3m" resend allowed at once, 2 x limit guesses in a moment). With
 * two, attempts less than half a window apart always share a window, while an attempt a whole
 * window after the last one is never held back by it.
 */
import type { Clock } from '../clock.js';
import { LatchkeyError } from '../errors.js';
import { msg, type Message } from '../i18n/message.js';
import { fixedWindow, type CounterStore, type LimitedBucket } from './counter-store.js';
import { parseRateLimitRules, type RateLimitAction, type RateLimitRuleSettings, type RateLimitRule, type RateLimitScope } from './rules.js';
import { hashSubject, ipNetwork, normalizeRateLimitKey } from './subject.js';

export interface RateLimitSubject {
  /** The client's IP address, as the HTTP adapter determined it (trusted proxies applied). */
  ip: string;
  /** What is being attacked: the login typed, the email address a reset is asked for. */
  key?: string;
  /** The signed-in user, for actions only a signed-in user can take. */
  userId?: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** When refused, seconds until every full window has ended (for Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
}

/** One action's attempt by one subject, for counting several actions as one attempt. */
export interface RateLimitAttempt {
  action: RateLimitAction;
  subject: RateLimitSubject;
}

/** A decision on attempts counted together; when refused, the action whose full window ends last. */
export type RateLimitJointDecision = RateLimitDecision & { refusedBy?: RateLimitAction };

/** What a refused attempt says when its flow names nothing more precise. */
const TOO_MANY_ATTEMPTS_MESSAGE = msg('Too many attempts. Please try again later.');

/** A refused attempt, for flows that stop there; adapters answer 429 with Retry-After. */
export class RateLimitedError extends LatchkeyError {
  readonly action: RateLimitAction;
  readonly retryAfterSeconds: number;

  constructor(action: RateLimitAction, retryAfterSeconds: number, message: string | Message = TOO_MANY_ATTEMPTS_MESSAGE) {
    super('rate_limited', message);
    this.name = 'RateLimitedError';
    this.action = action;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export interface RateLimiter {
  /** Counts one attempt in every bucket of the action that applies to the subject, unless one is full. */
  consume(action: RateLimitAction, subject: RateLimitSubject): Promise<RateLimitDecision>;
  /**
   * Counts one attempt under several actions at once (a login is a `login` and a possible
   * `login_failed`): in all of their buckets, or, when any of them is full, in none.
   */
  consumeTogether(attempts: readonly RateLimitAttempt[]): Promise<RateLimitJointDecision>;
  /** consume, throwing RateLimitedError ('rate_limited') when the attempt is refused. */
  enforce(action: RateLimitAction, subject: RateLimitSubject): Promise<void>;
  /**
   * Takes back one attempt from each bucket `consume` counts for this subject now: for an attempt
   * counted up front as a possible failure that turned out to succeed. It never resets a count, so
   * an attacker who logs into their own account from an IP does not wipe that IP's failures;
   * it only withdraws the attempt that just succeeded.
   */
  refund(action: RateLimitAction, subject: RateLimitSubject): Promise<void>;
  /**
   * Forgets the subject's counts of an action in its current windows, for the rules of the given
   * scopes only: the failures counted against an account once its owner has proved who they are.
   */
  clear(action: RateLimitAction, subject: RateLimitSubject, scopes: readonly RateLimitScope[]): Promise<void>;
}

export interface RateLimiterOptions {
  /** ACCOUNT_RATE_LIMITS: false switches every limit off. */
  rules: RateLimitRuleSettings;
  store: CounterStore;
  clock: Clock;
}

interface Bucket extends LimitedBucket {
  action: RateLimitAction;
  scope: RateLimitScope;
}

function subjectOf(scope: RateLimitScope, subject: RateLimitSubject): string | undefined {
  switch (scope) {
    case 'ip':
      return ipNetwork(subject.ip);
    case 'key':
      return subject.key === undefined ? undefined : normalizeRateLimitKey(subject.key);
    case 'user':
      return subject.userId === undefined ? undefined : String(subject.userId);
    case 'ip+key':
      return subject.key === undefined ? undefined : `${ipNetwork(subject.ip)} ${normalizeRateLimitKey(subject.key)}`;
  }
}

/** Parses every action's rules at once, so a bad rule stops start-up rather than a request. */
function parseAll(rules: RateLimitRuleSettings): Map<RateLimitAction, RateLimitRule[]> {
  const parsed = new Map<RateLimitAction, RateLimitRule[]>();
  if (rules === false) return parsed;
  for (const [action, text] of Object.entries(rules) as Array<[RateLimitAction, string | undefined]>) {
    if (text !== undefined) parsed.set(action, parseRateLimitRules(text));
  }
  return parsed;
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { store, clock } = options;
  const rulesByAction = parseAll(options.rules);

  /**
   * The buckets an attempt falls in at `now`: one per rule in each of the two window sets. The
   * name holds the action, the scope, the window length and start, and the hashed subject. Two
   * rules of one scope with the same window would name the same bucket; they are merged (the lower
   * limit wins) so that one attempt is counted once, not once per rule.
   */
  function bucketsFor(action: RateLimitAction, subject: RateLimitSubject, now: Date): Bucket[] {
    const buckets = new Map<string, Bucket>();
    for (const rule of rulesByAction.get(action) ?? []) {
      const value = subjectOf(rule.scope, subject);
      if (value === undefined) continue;
      for (const offsetMs of [0, (rule.windowSeconds * 1000) / 2]) {
        const window = fixedWindow(now, rule.windowSeconds, offsetMs);
        const name = `${action}:${rule.scope}:${rule.windowSeconds}:${window.start.getTime() / 1000}:${hashSubject(value)}`;
        const existing = buckets.get(name);
        if (existing === undefined || rule.limit < existing.limit) buckets.set(name, { name, limit: rule.limit, windowEnd: window.end, action, scope: rule.scope });
      }
    }
    return [...buckets.values()];
  }

  async function consumeTogether(attempts: readonly RateLimitAttempt[]): Promise<RateLimitJointDecision> {
    const now = clock.now();
    const buckets = attempts.flatMap(({ action, subject }) => bucketsFor(action, subject, now));
    if (buckets.length === 0) return { allowed: true, retryAfterSeconds: 0 };
    const { counted, counts } = await store.countWithinLimits(buckets, now);
    if (counted) return { allowed: true, retryAfterSeconds: 0 };
    // The wait is until every full bucket has ended, not only the first that refused: the next
    // attempt is refused while any of them is still full.
    const full = buckets.filter((bucket, index) => (counts[index] ?? 0) >= bucket.limit);
    const last = full.reduce((latest, bucket) => (bucket.windowEnd > latest.windowEnd ? bucket : latest));
    const retryAfterMs = last.windowEnd.getTime() - now.getTime();
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)), refusedBy: last.action };
  }

  async function consume(action: RateLimitAction, subject: RateLimitSubject): Promise<RateLimitDecision> {
    const { allowed, retryAfterSeconds } = await consumeTogether([{ action, subject }]);
    return { allowed, retryAfterSeconds };
  }

  return {
    consume,
    consumeTogether,

    async enforce(action: RateLimitAction, subject: RateLimitSubject): Promise<void> {
      const decision = await consume(action, subject);
      if (!decision.allowed) throw new RateLimitedError(action, decision.retryAfterSeconds);
    },

    async refund(action: RateLimitAction, subject: RateLimitSubject): Promise<void> {
      // The buckets are those of the current windows. Should a window have rolled over since the
      // attempt was counted, the refund lands in the new window: at most one attempt per window
      // boundary, and never below zero.
      const now = clock.now();
      await Promise.all(bucketsFor(action, subject, now).map((bucket) => store.decrement(bucket.name, now)));
    },

    async clear(action: RateLimitAction, subject: RateLimitSubject, scopes: readonly RateLimitScope[]): Promise<void> {
      const buckets = bucketsFor(action, subject, clock.now()).filter((bucket) => scopes.includes(bucket.scope));
      await store.remove(buckets.map((bucket) => bucket.name));
    },
  };
}
