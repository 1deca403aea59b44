import type { User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import type { LatchkeyDeps } from '../deps.js';
import { loginMethod, type LoginProofs } from './proofs.js';

/**
 * What every completed login leaves behind, whichever door it came through, once the adapter has
 * created the user's new session: the time of the login on the account (Django's last_login) and
 * user_logged_in in the audit trail, naming how the user proved who they are.
 */
export async function completeLogin(deps: Pick<LatchkeyDeps, 'store' | 'clock' | 'events'>, user: User, proofs: LoginProofs, client: ClientInfo): Promise<void> {
  await deps.store.users.update(user.id, { lastLogin: deps.clock.now() });
  await deps.events.emit('user_logged_in', user.id, client, { method: loginMethod(proofs) });
}
