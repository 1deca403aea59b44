import type { ProviderKind } from '../kind.js';

export const CODE_HOSTING_PROVIDER_KINDS: readonly ProviderKind[] = [];
