import type { ProviderKind } from '../kind.js';

export const OPENID_CONNECT_BASED_PROVIDER_KINDS: readonly ProviderKind[] = [];
