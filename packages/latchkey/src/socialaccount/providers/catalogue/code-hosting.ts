/**
 * The named kinds for code hosting: GitHub, GitLab, Bitbucket, Stack Exchange and
 * Atlassian, each on the OAuth 2.0 base (oauth2.ts) with a profile mapper of its own.
 */
import type { ProviderKind } from '../kind.js';
import { atlassianProviderKind } from './atlassian.js';
import { bitbucketOAuth2ProviderKind } from './bitbucket-oauth2.js';
import { githubProviderKind } from './github.js';
import { gitlabProviderKind } from './gitlab.js';
import { stackExchangeProviderKind } from './stackexchange.js';

export const CODE_HOSTING_PROVIDER_KINDS: readonly ProviderKind[] = [
  githubProviderKind,
  gitlabProviderKind,
  bitbucketOAuth2ProviderKind,
  stackExchangeProviderKind,
  atlassianProviderKind,
];
