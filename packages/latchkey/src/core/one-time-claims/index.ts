export type { ClosableOneTimeClaimStore, OneTimeClaimStore } from './one-time-claim-store.js';
