import type { User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import type { LatchkeyDeps } from '../deps.js';
import { deleteApiToken, issueApiToken, NO_CLIENT, userForApiToken } from '../tokens/api-tokens.js';

/** The project's way to the API tokens (Django REST framework's authtoken, one token per user). */
export interface LatchkeyApiTokens {
  /** The user's key, making their token if they have none (`manage drf_create_token`); recorded as api_token_created. */
  issue(user: User, client?: ClientInfo): Promise<string>;
  /** Deletes the user's token: every copy of the key stops working at once. Whether there was one. */
  delete(user: User, client?: ClientInfo): Promise<boolean>;
  /** The active user this key belongs to; undefined for any other key (malformed, unknown, deleted, inactive). */
  userFor(key: string): Promise<User | undefined>;
}

export function apiTokensOf(deps: LatchkeyDeps): LatchkeyApiTokens {
  return {
    issue: (user, client = NO_CLIENT) => issueApiToken(deps, user, client),
    delete: (user, client = NO_CLIENT) => deleteApiToken(deps, user, client),
    userFor: (key) => userForApiToken(deps, key),
  };
}
