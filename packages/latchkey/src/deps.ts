import type { AccountAdapter } from './account/adapter.js';
import type { SocialAccountAdapter } from './socialaccount/adapter.js';
import type { ProviderDirectory } from './socialaccount/directory.js';
import type { AccountEvents } from './account/events.js';
import type { PasswordHashing } from './account/passwords/index.js';
import type { OneTimeClaimStore } from './core/one-time-claims/index.js';
import type { RateLimiter } from './core/rate-limit/index.js';
import type { TemplateRenderer } from './templates/ports.js';
import type { Catalogs } from './core/i18n/catalogs.js';
import type { Settings } from './config/settings.js';
import type { LatchkeyUrls } from './config/url-names.js';
import type { BackgroundTasks } from './core/background.js';
import type { Clock } from './core/clock.js';
import type { MailOutbox, Mailer } from './mail/ports.js';
import type { SessionService } from './sessions/session-service.js';
import type { Store } from './store.js';
import type { UserField } from './core/user-fields.js';

/**
 * What flows and domain services are given: the settings, the clock and the ports. Each function
 * takes only the part it needs (`Pick<LatchkeyDeps, 'store' | 'passwords'>`), so tests build
 * exactly that and nothing reads globals.
 */
export interface LatchkeyDeps {
  settings: Settings;
  /** The project's own user fields (docs/user-fields.md), in declaration order; none by default. */
  userFields: readonly UserField[];
  /** This Latchkey's paths: what its routes are registered at and what its links say (config/url-names.ts). */
  urls: LatchkeyUrls;
  clock: Clock;
  store: Store;
  passwords: PasswordHashing;
  mailer: Mailer;
  /** Sends mail queued in a change's transaction (account/changes.ts), and the rows a crash left. */
  mailOutbox: MailOutbox;
  sessions: SessionService;
  /** The project's hook points (account/adapter.ts). */
  adapter: AccountAdapter;
  /** The project's hook points for social sign-in (socialaccount/adapter.ts). */
  socialAdapter: SocialAccountAdapter;
  /** The providers people can sign in with (socialaccount/directory.ts). */
  providerDirectory: ProviderDirectory;
  /** Publishes account events and writes the audit trail. */
  events: AccountEvents;
  rateLimits: RateLimiter;
  /** Replay guards for one-time codes (a TOTP code is claimed for its time step); shared by every instance. */
  oneTimeClaims: OneTimeClaimStore;
  /** Pages and emails; a project overrides templates by path. */
  templates: TemplateRenderer;
  /** The translation catalogs of the offered languages (core/i18n): Latchkey's, under the project's. */
  catalogs: Catalogs;
  /** Work done after the answer (mail whose timing would reveal an account); shutdown waits for it. */
  background: BackgroundTasks;
}
