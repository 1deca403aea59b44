import { commitChange } from '../account/changes.js';
import type { User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import type { LatchkeyDeps } from '../deps.js';
import type { SocialAccount } from '../socialaccount/model.js';
import { openProviderToken } from '../socialaccount/tokens.js';
import { NO_CLIENT } from '../tokens/api-tokens.js';

/** A provider account to connect by code: what a sign-in through the provider would store. */
export interface NewConnection {
  /** The provider's id (`google`, `github`, the `provider_id` of an OpenID Connect or SAML app). */
  provider: string;
  /** The person's id at the provider (`sub`, the SAML NameID). */
  uid: string;
  /** What the provider said of them (allauth's extra_data); replaced at each sign-in. */
  extraData?: Record<string, unknown>;
  /** When they last signed in with it; now when not given. */
  lastLogin?: Date;
}

/** A provider's tokens for one provider account, in clear (SOCIALACCOUNT_STORE_TOKENS). */
export interface ProviderTokens {
  accessToken: string;
  /** Empty when the provider gave none. */
  refreshToken: string;
  expiresAt: Date | null;
}

/** The project's way to the provider accounts connected to its users (allauth's SocialAccount). */
export interface LatchkeySocialAccounts {
  /** The user's provider accounts, each with the extra data the provider sent at the last sign-in. */
  listForUser(user: Pick<User, 'id'>): Promise<SocialAccount[]>;
  /**
   * Connects a provider account to the user without a sign-in (bringing accounts over from another
   * system, a test's fixture), recorded as social_account_added. Throws LatchkeyError
   * 'social_account_exists' when that provider account is connected already.
   */
  connect(user: Pick<User, 'id'>, connection: NewConnection, client?: ClientInfo): Promise<SocialAccount>;
  /**
   * The tokens the provider gave at the account's last sign-in, to call its API on the person's
   * behalf; undefined when none are stored (SOCIALACCOUNT_STORE_TOKENS is off) or they no longer
   * open (the secret key changed).
   */
  providerTokens(account: Pick<SocialAccount, 'id'>): Promise<ProviderTokens | undefined>;
}

export function socialAccountsOf(deps: LatchkeyDeps): LatchkeySocialAccounts {
  return {
    listForUser: (user) => deps.store.socialAccounts.listForUser(user.id),
    connect(user, connection, client = NO_CLIENT) {
      const lastLogin = connection.lastLogin ?? deps.clock.now();
      return commitChange(deps, async (change) => {
        const account = await change.repositories.socialAccounts.create({
          userId: user.id,
          provider: connection.provider,
          uid: connection.uid,
          extraData: connection.extraData ?? {},
          dateJoined: lastLogin,
          lastLogin,
        });
        await change.record('social_account_added', user.id, client, { provider: connection.provider });
        return account;
      });
    },
    async providerTokens(account) {
      // One token per account and app; of several apps' tokens, the one saved last.
      const token = (await deps.store.socialTokens.listForAccount(account.id)).sort((a, b) => b.id - a.id)[0];
      const opened = token === undefined ? undefined : openProviderToken(deps, token);
      return opened === undefined || token === undefined ? undefined : { ...opened, expiresAt: token.expiresAt };
    },
  };
}
