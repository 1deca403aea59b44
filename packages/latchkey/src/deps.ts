import type { PasswordHashing } from './account/passwords/index.js';
import type { Settings } from './config/settings.js';
import type { Clock } from './core/clock.js';
import type { Mailer } from './mail/index.js';
import type { SessionService } from './sessions/session-service.js';
import type { Store } from './storage/ports.js';

/**
 * What flows and domain services are given: the settings, the clock and the ports. Each function
 * takes only the part it needs (`Pick<LatchkeyDeps, 'store' | 'passwords'>`), so tests build
 * exactly that and nothing reads globals.
 */
export interface LatchkeyDeps {
  settings: Settings;
  clock: Clock;
  store: Store;
  passwords: PasswordHashing;
  mailer: Mailer;
  sessions: SessionService;
}
