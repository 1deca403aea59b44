import { isUsablePassword } from '../../account/passwords/index.js';
import type { Settings } from '../../config/settings.js';
import type { User } from '../../account/model.js';

/** The user as the headless API shows them (allauth's User schema); no username in projects without one. */
export function userData(settings: Pick<Settings, 'USERNAME_TYPE'>, user: User): Record<string, unknown> {
  return {
    id: user.id,
    display: user.name || (user.username ?? user.email),
    has_usable_password: isUsablePassword(user.password),
    ...(user.email === '' ? {} : { email: user.email }),
    ...(settings.USERNAME_TYPE === 'username' && user.username !== null ? { username: user.username } : {}),
  };
}
