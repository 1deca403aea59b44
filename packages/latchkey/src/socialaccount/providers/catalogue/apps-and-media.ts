import type { ProviderKind } from '../kind.js';

export const APPS_AND_MEDIA_PROVIDER_KINDS: readonly ProviderKind[] = [];
