import type { ProviderKind } from '../kind.js';

export const APPLE_PROVIDER_KINDS: readonly ProviderKind[] = [];
