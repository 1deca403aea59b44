import type { ProviderKind } from '../kind.js';

export const NETWORKS_PROVIDER_KINDS: readonly ProviderKind[] = [];
