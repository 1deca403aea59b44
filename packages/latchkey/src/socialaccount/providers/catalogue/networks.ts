/** The named kinds for social networks: Microsoft, Facebook, X (Twitter) and Reddit. */
import type { ProviderKind } from '../kind.js';
import { facebookProviderKind } from './facebook.js';
import { microsoftProviderKind } from './microsoft.js';
import { redditProviderKind } from './reddit.js';
import { twitterOAuth2ProviderKind } from './twitter-oauth2.js';

export const NETWORKS_PROVIDER_KINDS: readonly ProviderKind[] = [microsoftProviderKind, facebookProviderKind, twitterOAuth2ProviderKind, redditProviderKind];
