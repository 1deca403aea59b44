import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { createPasswordHashing, type PasswordHashing } from './account/passwords/index.js';
import type { Settings } from './config/settings.js';
import { AccountAdapter } from './account/adapter.js';
import { SocialAccountAdapter } from './socialaccount/adapter.js';
import { appsFromSettings } from './socialaccount/apps.js';
import { checkSettingsApps, createProviderDirectory } from './socialaccount/directory.js';
import type { ProviderKind } from './socialaccount/providers/kind.js';
import { createProviderRegistry } from './socialaccount/providers/registry.js';
import { AccountEvents } from './account/events.js';
import { BackgroundTasks } from './core/background.js';
import { systemClock, type Clock } from './core/clock.js';
import { createOneTimeClaimStore } from './cache/create-one-time-claim-store.js';
import { createCounterStore } from './cache/create-counter-store.js';
import { createRateLimiter } from './core/rate-limit/index.js';
import { createTemplateRenderer } from './templates/renderer.js';
import { keyedHash } from './core/crypto.js';
import { LatchkeyError } from './core/errors.js';
import type { LatchkeyDeps } from './deps.js';
import { allowedHostsGuard } from './http/kit/allowed-hosts.js';
import { csrfOptionsFrom, csrfToken } from './http/kit/csrf.js';
import { isInsideLatchkeyScope, latchkeyPlugin, type LatchkeyPluginOptions } from './http/plugin.js';
import { RequestSessions } from './http/kit/request-sessions.js';
import type { HttpContext } from './http/kit/context.js';
import { flash, renderPage, type FlashMessage } from './http/pages/page.js';
import { createMailer } from './mail/index.js';
import { type Mailer } from './mail/ports.js';
import { SessionService } from './sessions/session-service.js';
import { openDatabase, type Database } from './storage/database.js';
import type { User } from './account/model.js';

export interface CreateLatchkeyOptions {
  settings: Settings;
  clock?: Clock;
  /** Replaces the mailer EMAIL_URL would make (tests pass a MemoryMailer they can read). */
  mailer?: Mailer;
  /** The project's account adapter (its users/adapters.ts); the default follows the settings. */
  adapter?: AccountAdapter;
  /**
   * The project's social account adapter (its users/adapters.ts): who may sign up through a
   * provider and what the new user's fields are. The social sign-in flows ask it.
   */
  socialAdapter?: SocialAccountAdapter;
  /**
   * Provider kinds of the project's own, beside the library's (socialaccount/providers/registry.ts):
   * SOCIALACCOUNT_PROVIDERS may then configure apps of each. A provider on the OAuth 2.0 base is
   * one oauth2ProviderKind({...}).
   */
  socialProviderKinds?: readonly ProviderKind[];
  /** The project's template folders, searched before the library's (override a template by path). */
  templateDirs?: readonly string[];
  /** An open database to use instead of opening DATABASE_URL (tests pass a fresh schema). Closed by close(). */
  database?: Database;
  /**
   * `auto` applies pending migrations (local mode's `npm start`); `require` refuses to start
   * while any is pending, so production changes its schema only through `manage migrate`.
   */
  migrations?: 'auto' | 'require';
}

export interface Latchkey {
  readonly settings: Settings;
  readonly deps: LatchkeyDeps;
  readonly database: Database;
  /** Register once on the project's app: `await app.register(latchkey.plugin)`. */
  readonly plugin: FastifyPluginAsync<LatchkeyPluginOptions>;
  /** An onRequest hook refusing Host headers outside ALLOWED_HOSTS; add it to the whole app. */
  readonly allowedHostsGuard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  readonly requestSessions: RequestSessions;
  /** The logged-in, active user of a request, for the project's own routes. */
  currentUser(request: FastifyRequest): Promise<User | undefined>;
  /**
   * A CSRF token for a form the project renders (field `csrfmiddlewaretoken`), setting the cookie
   * if needed. Only for routes registered inside `plugin` (its `routes` option): only there are
   * the form's POSTs checked, so a token anywhere else would promise protection it does not give.
   */
  csrfToken(request: FastifyRequest, reply: FastifyReply): string;
  /**
   * Renders one of the project's pages with Latchkey's layout, flash messages, user and CSRF
   * token, as the account pages are; for routes registered inside `plugin` (its routes option).
   * `status` is 200 unless given (a refused form answers 400).
   */
  renderPage(request: FastifyRequest, reply: FastifyReply, template: string, context?: Record<string, unknown>, status?: number): Promise<FastifyReply>;
  /** Queues a message for the next page the person sees ("Information successfully updated."), as Django's messages. */
  flash(request: FastifyRequest, reply: FastifyReply, message: FlashMessage): Promise<void>;
  /** Closes the database, the mailer and the hashing workers. */
  close(): Promise<void>;
}

export function passwordHashingFrom(settings: Settings): PasswordHashing {
  return createPasswordHashing({
    hashers: settings.PASSWORD_HASHERS,
    argon2: { memoryCost: settings.ARGON2_MEMORY_COST, timeCost: settings.ARGON2_TIME_COST, parallelism: settings.ARGON2_PARALLELISM },
    pbkdf2Iterations: settings.PBKDF2_ITERATIONS,
    bcryptRounds: settings.BCRYPT_ROUNDS,
    concurrency: settings.PASSWORD_HASHING_CONCURRENCY,
    maxQueued: settings.PASSWORD_HASHING_QUEUE_LIMIT,
    maxPasswordBytes: settings.PASSWORD_MAX_BYTES,
  });
}

/**
 * The start of every Redis key of this project: `latchkey:<id>:`, where the id is derived from
 * LATCHKEY_SECRET_KEY (a keyed hash, so it reveals nothing of the key). Every instance of one
 * project has the same key and so the same namespace; another project on the same server has
 * another. (In test mode every settings load draws a random key, so test runs never collide.)
 */
function redisNamespace(settings: Settings): string {
  return `latchkey:${keyedHash(settings.SECRET_KEY, 'redis-namespace', '').slice(0, 12)}:`;
}

/** Opens the database (failing fast and clearly when it is unreachable) and wires every part. */
export async function createLatchkey(options: CreateLatchkeyOptions): Promise<Latchkey> {
  const { settings } = options;
  const clock = options.clock ?? systemClock;
  // Read before anything is opened: a mistake in SOCIALACCOUNT_PROVIDERS stops start-up.
  const providerRegistry = createProviderRegistry(options.socialProviderKinds);
  const providerApps = appsFromSettings(settings.SOCIALACCOUNT_PROVIDERS);
  checkSettingsApps(settings, providerRegistry, providerApps);
  const database = options.database ?? (await openDatabase({ url: settings.DATABASE_URL, usernameType: settings.USERNAME_TYPE }));
  try {
    if ((options.migrations ?? 'require') === 'auto') {
      await database.migrate();
    } else {
      const pending = await database.pendingMigrations();
      if (pending.length > 0) {
        throw new LatchkeyError(
          'configuration_invalid',
          `The database is not up to date (${pending.length} migration(s) pending: ${pending.join(', ')}). Run: npm run manage -- migrate`,
        );
      }
    }
  } catch (error) {
    await database.close();
    throw error;
  }

  const passwords = passwordHashingFrom(settings);
  const mailer = options.mailer ?? createMailer({ url: settings.EMAIL_URL, defaultFrom: settings.DEFAULT_FROM_EMAIL });
  const sessions = new SessionService(database.store.sessions, clock, {
    absoluteLifetime: settings.SESSION_COOKIE_AGE,
    idleTimeout: settings.SESSION_IDLE_TIMEOUT,
  });
  // Keys in Redis are named per project: projects sharing a server must not share counters, nor
  // block each other's codes through claims on the same authenticator ids.
  const namespace = redisNamespace(settings);
  const counters = await createCounterStore({ database, redisUrl: settings.REDIS_URL, redisKeyPrefix: `${namespace}rate-limit:` });
  const oneTimeClaims = await createOneTimeClaimStore({ database, redisUrl: settings.REDIS_URL, redisKeyPrefix: `${namespace}claim:` }).catch(async (error: unknown) => {
    await counters.close();
    throw error;
  });
  const deps: LatchkeyDeps = {
    settings,
    clock,
    store: database.store,
    passwords,
    mailer,
    sessions,
    adapter: options.adapter ?? new AccountAdapter(settings),
    socialAdapter: options.socialAdapter ?? new SocialAccountAdapter(settings),
    socialProviders: createProviderDirectory({ settings, clock, store: database.store, settingsApps: providerApps, registry: providerRegistry }),
    events: new AccountEvents(database.store.auditLog, clock),
    rateLimits: createRateLimiter({ rules: settings.ACCOUNT_RATE_LIMITS, store: counters, clock }),
    oneTimeClaims,
    templates: createTemplateRenderer({ projectDirs: options.templateDirs ?? [], cache: settings.ENVIRONMENT === 'production' }),
    background: new BackgroundTasks(),
  };
  const requestSessions = new RequestSessions(sessions, database.store, settings, clock);

  const page: HttpContext = { deps, sessions: requestSessions, client: 'browser' };
  const insideOnly = (request: FastifyRequest, what: string) => {
    if (!isInsideLatchkeyScope(request)) {
      throw new Error(`latchkey.${what}() is for routes registered inside latchkey.plugin (its routes option), where cookies and CSRF are handled.`);
    }
  };

  return {
    settings,
    deps,
    database,
    plugin: latchkeyPlugin(page),
    allowedHostsGuard: allowedHostsGuard(settings.ALLOWED_HOSTS),
    requestSessions,
    currentUser: (request) => requestSessions.currentUser(request),
    csrfToken(request, reply) {
      insideOnly(request, 'csrfToken');
      return csrfToken(request, reply, csrfOptionsFrom(settings));
    },
    renderPage(request, reply, template, context = {}, status = 200) {
      insideOnly(request, 'renderPage');
      return renderPage(page, request, reply, template, context, status);
    },
    flash(request, reply, message) {
      return flash(page, request, reply, message);
    },
    async close() {
      await deps.background.idle();
      await Promise.allSettled([passwords.close(), mailer.close(), counters.close(), oneTimeClaims.close()]);
      await database.close();
    },
  };
}
