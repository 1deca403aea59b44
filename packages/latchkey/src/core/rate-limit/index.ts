export { fitsWithinLimits, fixedWindow, type ClosableCounterStore, type CounterStore, type CountOutcome, type FixedWindow, type LimitedBucket } from './counter-store.js';
export {
  createRateLimiter,
  RateLimitedError,
  type RateLimitAttempt,
  type RateLimitDecision,
  type RateLimitJointDecision,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitSubject,
} from './rate-limiter.js';
export { parseRateLimitRules, RATE_LIMIT_SCOPES, type RateLimitAction, type RateLimitRule, type RateLimitScope } from './rules.js';
export { ipNetwork, normalizeRateLimitKey } from './subject.js';
