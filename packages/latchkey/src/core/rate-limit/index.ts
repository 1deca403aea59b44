export { fixedWindow, type ClosableCounterStore, type CounterStore, type FixedWindow } from './counter-store.js';
export { createRateLimiter, RateLimitedError, type RateLimitDecision, type RateLimiter, type RateLimiterOptions, type RateLimitSubject } from './rate-limiter.js';
export { parseRateLimitRules, type RateLimitAction, type RateLimitRule, type RateLimitScope } from './rules.js';
export { ipNetwork, normalizeRateLimitKey } from './subject.js';
