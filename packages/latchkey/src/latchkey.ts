import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { createPasswordHashing, type PasswordHashing } from './account/passwords/index.js';
import { envNameOf, type Settings } from './config/settings.js';
import { AccountAdapter } from './account/adapter.js';
import { checkLoginStages } from './login/project-stages.js';
import { SocialAccountAdapter } from './socialaccount/adapter.js';
import { appsFromSettings } from './socialaccount/apps.js';
import { checkSettingsApps, createProviderDirectory } from './socialaccount/directory.js';
import type { ProviderKind } from './socialaccount/providers/kind.js';
import { createProviderRegistry } from './socialaccount/providers/registry.js';
import { AccountEvents } from './account/events.js';
import { BackgroundTasks } from './core/background.js';
import { systemClock, type Clock } from './core/clock.js';
import { createSharedStores } from './cache/create-shared-stores.js';
import type { OutageLog } from './cache/redis-connection.js';
import { createRateLimiter } from './core/rate-limit/index.js';
import { createTemplateRenderer } from './templates/renderer.js';
import { loadCatalogs, type Translator } from './core/i18n/catalogs.js';
import { readerTranslator } from './http/kit/request-language.js';
import { latchkeyUrls, type RouteName, type UrlParams, type UrlQuery } from './config/url-names.js';
import { keyedHash } from './core/crypto.js';
import { LatchkeyError } from './core/errors.js';
import { checkUserFields, NO_USER_FIELDS, type UserFieldSet } from './core/user-fields.js';
import { projectSignupFieldsProblem } from './config/signup-fields.js';
import type { LatchkeyDeps } from './deps.js';
import { allowedHostsGuard } from './http/kit/allowed-hosts.js';
import { errorPageHandlers, sendErrorAnswer } from './http/kit/error-pages.js';
import { strictTransportSecurity, type OnRequestHook } from './http/kit/strict-transport-security.js';
import type { ServiceChecks } from './http/health.js';
import { csrfOptionsFrom, csrfToken } from './http/kit/csrf.js';
import { isInsideLatchkeyScope, latchkeyPlugin, type LatchkeyPluginOptions } from './http/plugin.js';
import { RequestSessions } from './http/kit/request-sessions.js';
import type { HttpContext } from './http/kit/context.js';
import { flash, renderPage, type FlashMessage } from './http/pages/page.js';
import { createMailer, MailOutboxSender, type MailOutboxPolicy } from './mail/index.js';
import { type Mailer } from './mail/ports.js';
import { SessionService } from './sessions/session-service.js';
import { operationsOf, type LatchkeyOperations } from './facade/index.js';
import { apiGuards, pageGuards, type RouteGuards } from './http/guards.js';
import { openDatabase, type Database } from './storage/database.js';
import type { ProjectMigrations } from './storage/migrations/project.js';
import type { User } from './account/model.js';

/** What createLatchkey starts from: the loaded settings, and the project's own parts (mailer, adapters, providers, templates). */
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
  /**
   * The project's locale folders (Django's LOCALE_PATHS), read before Latchkey's own catalogs: a
   * `<lang>/LC_MESSAGES/*.po` there adds a language or overrides a translation (docs/translations.md).
   */
  localeDirs?: readonly string[];
  /** An open database to use instead of opening DATABASE_URL (tests pass a fresh schema). Closed by close(). */
  database?: Database;
  /**
   * `auto` applies pending migrations (local mode's `npm start`); `require` refuses to start
   * while any is pending, so production changes its schema only through `manage migrate`.
   */
  migrations?: 'auto' | 'require';
  /**
   * The project's own migrations (its src/migrations/index.ts, written by `manage makemigration`):
   * applied after Latchkey's, by `manage migrate` or in local mode at start-up, and held to the
   * same rule (docs/project-data.md).
   */
  projectMigrations?: ProjectMigrations;
  /**
   * The project's own user fields (its src/users/fields.ts, `defineUserFields`): stored in columns
   * its migrations add to latchkey_users, and asked, shown and edited wherever the declaration
   * says (docs/user-fields.md).
   */
  userFields?: UserFieldSet;
  /**
   * Where Latchkey writes what happens outside a request: the services it depends on (Redis gone
   * away, Redis back: one line each), a mail the outbox could not send, an event subscriber that
   * failed. A pino or Fastify logger fits; default the console.
   */
  log?: LatchkeyLog;
  /**
   * The mail outbox's retries (mail/outbox-sender.ts: claims, backoff, attempts) and how often it
   * sweeps for mail left behind (default every 30 s; it also sweeps once at start-up).
   */
  mailOutbox?: { policy?: Partial<MailOutboxPolicy>; sweepIntervalMs?: number };
}

/** Latchkey's log outside requests: a pino or Fastify logger, or the console. */
export interface LatchkeyLog extends OutageLog {
  error(message: string): void;
}

/**
 * What createLatchkey gives the project: the settings, the operations on accounts (users,
 * addresses, sessions, tokens, authenticators, provider accounts, events, the audit trail, mail),
 * the plugin to register, hooks for the whole app, and helpers for the project's own routes.
 * This is the whole public API of a running Latchkey (docs/extending.md); what is not here is
 * internal and may change in any release.
 */
export interface Latchkey extends LatchkeyOperations {
  readonly settings: Settings;
  /**
   * Guards for the project's own pages, as Fastify preHandlers (`{ preHandler: latchkey.guards.signedIn }`):
   * a stranger goes to the login page and comes back; a user refused otherwise gets a 403 page.
   */
  readonly guards: RouteGuards;
  /** The same guards for the project's own JSON routes: token or session; 401 and 403 in DRF's `{"detail"}` shape. */
  readonly apiGuards: RouteGuards;
  /** Register once on the project's app: `await app.register(latchkey.plugin)`. */
  readonly plugin: FastifyPluginAsync<LatchkeyPluginOptions>;
  /**
   * An onRequest hook refusing Host headers outside ALLOWED_HOSTS with the 400 page; add it to the
   * whole app. Each refusal logs one warning naming the host and the setting to change.
   */
  readonly allowedHostsGuard: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /**
   * The site's 404 page (templates/404.html, in the layout) for a URL nothing serves, or
   * `{"detail": "Not found."}` for a JSON client: `app.setNotFoundHandler(latchkey.notFoundHandler)`.
   * The headless API and /api/ keep their own JSON answers.
   */
  readonly notFoundHandler: (request: FastifyRequest, reply: FastifyReply) => FastifyReply;
  /**
   * The site's error pages for a request that failed (500.html, or 400.html for Fastify's refusal of
   * a malformed body; the cause only in the log), or `{"detail": ...}` for a JSON client:
   * `app.setErrorHandler(latchkey.errorHandler)`. Latchkey's own routes use it already.
   */
  readonly errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply;
  /**
   * An onRequest hook adding Strict-Transport-Security (SECURE_HSTS_SECONDS and its companions) to
   * every answer of a request made over HTTPS; add it to the whole app, beside allowedHostsGuard.
   */
  readonly securityHeaders: OnRequestHook;
  /**
   * A page's link by its name (Django's `reverse()`): an account page's allauth name
   * (`account_login`) or an admin page's (`admin:index`, under ADMIN_URL), `:params` filled in and
   * encoded, `query` added: `latchkey.urlFor('account_login', {}, { next: '/orders/' })`.
   */
  urlFor(name: RouteName, params?: UrlParams, query?: UrlQuery): string;
  /** The signed-in, active user of a request routed inside the plugin: the same as `await request.user`. */
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
  /**
   * The reader's translator for a request (docs/translations.md): the signed-in person's chosen
   * language, else the language cookie, Accept-Language, LANGUAGE_CODE. For what the project's own
   * routes answer outside a template (a JSON message): `(await latchkey.translator(request)).translate(msg('Saved.'))`.
   */
  translator(request: FastifyRequest): Promise<Translator>;
  /** Queues a message for the next page the person sees ("Information successfully updated."), as Django's messages. */
  flash(request: FastifyRequest, reply: FastifyReply, message: FlashMessage): Promise<void>;
  /**
   * The database, for the project's own tables (docs/project-data.md): Kysely on Latchkey's
   * connections, typed by the project's description of its tables. Inside a change Latchkey makes
   * (a signup, a deletion), the adapter's hooks are handed the transaction's instead.
   */
  db<Tables extends object>(): Kysely<Tables>;
  /** Waits for mail being sent and work under way, then closes the database, the mailer and the hashing workers. */
  close(): Promise<void>;
}

/**
 * What the library's own code and tests reach besides the public API: the service bag every flow
 * takes, the open database and the request sessions. Never part of the public type.
 */
export interface InternalLatchkey extends Latchkey {
  readonly deps: LatchkeyDeps;
  readonly database: Database;
  readonly requestSessions: RequestSessions;
}

/** The internal parts of a Latchkey made by createLatchkey (the management commands, the test helpers). */
export function internalsOf(latchkey: Latchkey): InternalLatchkey {
  const internal = latchkey as Partial<InternalLatchkey>;
  if (internal.deps === undefined || internal.database === undefined || internal.requestSessions === undefined) {
    throw new Error('This Latchkey was not made by createLatchkey.');
  }
  return latchkey as InternalLatchkey;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
export function createLatchkey(options: CreateLatchkeyOptions): Promise<Latchkey> {
  return openLatchkey(options);
}

/** createLatchkey, for the library's own code and tests: the same object, with its internals typed. */
export async function openLatchkey(options: CreateLatchkeyOptions): Promise<InternalLatchkey> {
  const { settings } = options;
  const clock = options.clock ?? systemClock;
  // Read before anything is opened: a mistake in SOCIALACCOUNT_PROVIDERS stops start-up.
  const providerRegistry = createProviderRegistry(options.socialProviderKinds);
  const providerApps = appsFromSettings(settings.SOCIALACCOUNT_PROVIDERS);
  checkSettingsApps(settings, providerRegistry, providerApps);
  // Likewise a list of login stages that would let a login skip one.
  const adapter = options.adapter ?? new AccountAdapter(settings);
  checkLoginStages(adapter.getLoginStages());
  const userFields = options.userFields ?? NO_USER_FIELDS;
  checkUserFields(userFields);
  // A signup field that is none of Latchkey's nor the project's stops start-up in one line.
  const signupProblem = projectSignupFieldsProblem(settings.ACCOUNT_SIGNUP_FIELDS, userFields.fields);
  if (signupProblem !== undefined) throw new LatchkeyError('configuration_invalid', `ACCOUNT_SIGNUP_FIELDS (${envNameOf('ACCOUNT_SIGNUP_FIELDS')}) ${signupProblem}.`);
  const database = options.database ?? (await openDatabase({ url: settings.DATABASE_URL, usernameType: settings.USERNAME_TYPE, userFields }));
  try {
    if (database.userFields.fields !== userFields.fields) {
      throw new LatchkeyError('configuration_invalid', 'The database given to createLatchkey was opened with other user fields: open it with the same userFields.');
    }
    if ((options.migrations ?? 'require') === 'auto') {
      await database.migrate(options.projectMigrations);
    } else {
      const pending = await database.pendingMigrations(options.projectMigrations);
      if (pending.length > 0) {
        throw new LatchkeyError(
          'configuration_invalid',
          `The database is not up to date (${pending.length} migration(s) pending: ${pending.join(', ')}). Run: npm run manage -- migrate`,
        );
      }
    }
    const missing = await database.missingUserFieldColumns();
    if (missing.length > 0) {
      throw new LatchkeyError(
        'configuration_invalid',
        `The user field(s) ${missing.join(', ')} have no column in latchkey_users yet. Run: npm run manage -- makemigration add_user_fields, then npm run manage -- migrate (docs/user-fields.md)`,
      );
    }
  } catch (error) {
    await database.close();
    throw error;
  }

  const log = options.log ?? console;
  const passwords = passwordHashingFrom(settings);
  const mailer = options.mailer ?? createMailer({ url: settings.EMAIL_URL, defaultFrom: settings.DEFAULT_FROM_EMAIL });
  // The outbox sends through deps.mailer as it is at the time of sending, so that a mailer swapped
  // in later (a test pointing it at a failing server) is the one every mail goes through.
  const mailOutbox = new MailOutboxSender({
    repository: database.store.mailOutbox,
    mailer: { send: (message) => deps.mailer.send(message), close: () => deps.mailer.close() },
    clock,
    secretKey: settings.SECRET_KEY,
    ...(options.mailOutbox?.policy ? { policy: options.mailOutbox.policy } : {}),
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const background = new BackgroundTasks();
  const sessions = new SessionService(
    database.store.sessions,
    clock,
    { absoluteLifetime: settings.SESSION_COOKIE_AGE, idleTimeout: settings.SESSION_IDLE_TIMEOUT },
    settings.SECRET_KEY,
    background,
  );
  // Keys in Redis are named per project: projects sharing a server must not share counters, nor
  // block each other's codes through claims on the same authenticator ids.
  const namespace = redisNamespace(settings);
  const { counters, oneTimeClaims, pingRedis } = await createSharedStores({
    database,
    redisUrl: settings.REDIS_URL,
    redisNamespace: namespace,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const urls = latchkeyUrls(settings);
  const deps: LatchkeyDeps = {
    settings,
    userFields: userFields.fields,
    urls,
    clock,
    store: database.store,
    passwords,
    mailer,
    mailOutbox,
    sessions,
    adapter,
    socialAdapter: options.socialAdapter ?? new SocialAccountAdapter(settings),
    providerDirectory: createProviderDirectory({ settings, clock, store: database.store, settingsApps: providerApps, registry: providerRegistry }),
    events: new AccountEvents(database.store.auditLog, clock, (error, event) => log.error(`Account event ${event.name}: a subscriber failed: ${describeError(error)}`)),
    rateLimits: createRateLimiter({ rules: settings.ACCOUNT_RATE_LIMITS, store: counters, clock }),
    oneTimeClaims,
    catalogs: loadCatalogs({ languages: settings.LANGUAGES, localeDirs: options.localeDirs ?? [] }),
    templates: createTemplateRenderer({ projectDirs: options.templateDirs ?? [], cache: settings.ENVIRONMENT === 'production', urls }),
    background,
  };
  const requestSessions = new RequestSessions(sessions, database.store, settings, clock);
  // Mail a previous run committed but did not send (it crashed, or the mail server was down) goes
  // now, and whatever is left behind later goes with the next sweep.
  void deps.background.run(() => mailOutbox.sweep());
  mailOutbox.sweepEvery(options.mailOutbox?.sweepIntervalMs ?? 30_000, (sweep) => void deps.background.run(sweep));

  const ctx: HttpContext = { deps, sessions: requestSessions, client: 'browser' };
  const serviceChecks: ServiceChecks = {
    // The cheapest statement that needs a working connection to the server.
    database: async () => {
      await sql`select 1`.execute(database.kysely);
    },
    redis: pingRedis,
  };
  const insideOnly = (request: FastifyRequest, what: string) => {
    if (!isInsideLatchkeyScope(request)) {
      throw new Error(`latchkey.${what}() is for routes registered inside latchkey.plugin (its routes option), where cookies and CSRF are handled.`);
    }
  };

  return {
    settings,
    deps,
    database,
    ...operationsOf(deps),
    guards: pageGuards(ctx),
    apiGuards: apiGuards(ctx),
    plugin: latchkeyPlugin(ctx, serviceChecks),
    allowedHostsGuard: allowedHostsGuard(settings.ALLOWED_HOSTS, {
      explain: settings.ENVIRONMENT === 'local',
      sendPage: (request, reply, message) => sendErrorAnswer(deps, request, reply, 400, message === undefined ? {} : { message }),
    }),
    ...errorPageHandlers(deps),
    securityHeaders: strictTransportSecurity(settings),
    requestSessions,
    urlFor: (name, params, query) => urls.urlFor(name, params, query),
    currentUser: (request) => requestSessions.currentUser(request),
    csrfToken(request, reply) {
      insideOnly(request, 'csrfToken');
      return csrfToken(request, reply, csrfOptionsFrom(settings));
    },
    renderPage(request, reply, template, context = {}, status = 200) {
      insideOnly(request, 'renderPage');
      return renderPage(ctx, request, reply, template, context, status);
    },
    async translator(request) {
      return readerTranslator(deps, request, await requestSessions.currentUser(request));
    },
    flash(request, reply, message) {
      return flash(ctx, request, reply, message);
    },
    db<Tables extends object>() {
      return database.store.projectDatabase as unknown as Kysely<Tables>;
    },
    async close() {
      // No new sweep starts; the mails being sent (a request's, a sweep's) finish first.
      await mailOutbox.close();
      await deps.background.idle();
      await Promise.allSettled([passwords.close(), mailer.close(), counters.close(), oneTimeClaims.close()]);
      await database.close();
    },
  };
}
