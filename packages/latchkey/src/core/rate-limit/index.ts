export { createCounterStore, type CounterStoreOptions } from './create-counter-store.js';
export { fixedWindow, type ClosableCounterStore, type CounterStore, type FixedWindow } from './counter-store.js';
export { createDatabaseCounterStore } from './database-counter-store.js';
export { createRateLimiter, RateLimitedError, type RateLimitDecision, type RateLimiter, type RateLimiterOptions, type RateLimitSubject } from './rate-limiter.js';
export { DEFAULT_REDIS_KEY_PREFIX, openRedisCounterStore, type RedisCounterStoreOptions } from './redis-counter-store.js';
export { parseRateLimitRules, type RateLimitAction, type RateLimitRule, type RateLimitScope } from './rules.js';
export { ipNetwork, normalizeRateLimitKey } from './subject.js';
