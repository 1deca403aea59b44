export { createOneTimeClaimStore, type OneTimeClaimStoreOptions } from './create-one-time-claim-store.js';
export { createDatabaseOneTimeClaimStore } from './database-one-time-claim-store.js';
export type { ClosableOneTimeClaimStore, OneTimeClaimStore } from './one-time-claim-store.js';
export { DEFAULT_REDIS_CLAIM_KEY_PREFIX, openRedisOneTimeClaimStore, type RedisOneTimeClaimStoreOptions } from './redis-one-time-claim-store.js';
