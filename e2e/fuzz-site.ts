/**
 * The site the fuzzer walks (e2e/fuzz.test.ts): the example site's own app (examples/site's
 * buildApp, generated with use_drf=y, so the pages, the headless API, the token API and the admin
 * are all there) on a fresh database, with every optional feature that adds or deepens routes
 * switched on, the people it signs in as, the route table as Fastify built it, and what the site
 * logged.
 */
import { channel } from 'node:diagnostics_channel';
import type { SettingValues, User } from '@latchkey/core';
import { activateTotpFor, createTestLatchkey, type TestLatchkey } from '@latchkey/core/testing';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { buildApp, TEMPLATE_DIRS } from '../examples/site/src/app.js';
import { projectSettings } from '../examples/site/src/config/settings.js';
import { AccountAdapter, SocialAccountAdapter } from '../examples/site/src/users/adapters.js';
import { createTestKeyPair } from '../packages/latchkey/src/testing/saml-keys.js';
import type { FuzzRoute } from './fuzz-inputs.js';

/** Any 32 letters and digits make a CSRF secret; the fuzzer sends it as cookie and header, so that its POSTs reach the handlers. */
export const CSRF_SECRET = 'FuzzCsrfSecretFuzzCsrfSecret1234';
export const SAML_ORGANIZATION = 'acme';
/** Path parameters that name something configured, so that the other inputs get past "no such app". */
export const KNOWN_PARAMETERS: Record<string, string> = { providerId: 'dummy', provider: 'dummy', organization: SAML_ORGANIZATION };

/** Who sends a request: the cookies and headers that sign it in (none for the anonymous visitor). */
export interface Identity {
  name: string;
  cookies: Record<string, string>;
  headers: Record<string, string>;
}

/**
 * Provider apps that need no network: the dummy provider (with its own authorization page),
 * GitHub (fixed endpoints: the sign-in starts without a request to GitHub, and a callback with a
 * bad state is refused before the token request) and a SAML app whose IdP is given inline. An
 * OpenID Connect app is left out: starting its sign-in reads the provider's discovery document.
 */
function providerApps(): SettingValues['SOCIALACCOUNT_PROVIDERS'] {
  const idp = createTestKeyPair('fuzz idp');
  const entityId = 'https://idp.example.com/';
  return {
    dummy: { APPS: [{ client_id: 'dummy', name: 'Dummy' }] },
    github: { APPS: [{ client_id: 'fuzz-client', secret: 'fuzz-secret' }] },
    saml: { APPS: [{ provider_id: entityId, name: 'Acme', client_id: SAML_ORGANIZATION, settings: { idp: { entity_id: entityId, sso_url: `${entityId}sso`, x509cert: idp.certificate } } }] },
  };
}

/** The example site's settings, plus every switch that gives the routes more to do. */
function siteSettings(): Partial<SettingValues> {
  return {
    ...projectSettings.base,
    ...projectSettings.test,
    ACCOUNT_LOGIN_BY_CODE_ENABLED: true,
    ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
    ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: true,
    MFA_SUPPORTED_TYPES: ['totp', 'recovery_codes', 'webauthn'],
    MFA_PASSKEY_LOGIN_ENABLED: true,
    MFA_PASSKEY_SIGNUP_ENABLED: true,
    MFA_TRUST_ENABLED: true,
    HEADLESS_SERVE_SPECIFICATION: true,
    SOCIALACCOUNT_PROVIDERS: providerApps(),
  };
}

/** What in a log line means something broke: a stack (frames, or pino's `stack` key), a path into node_modules, the engine's own message. */
const LOG_LEAKS = [/\\n\s+at \S/, /node_modules/, /"stack"\s*:/, /Maximum call stack/i];
/** pino's level numbers: 50 is error, 60 fatal. */
const ERROR_LEVEL = 50;

/**
 * What the site logs, written here instead of to stdout: each line is kept only if it shows a
 * stack trace or was logged at error level or above, the rest is counted.
 */
export class LogWatch {
  lines = 0;
  private findings: string[] = [];

  write(line: string): void {
    this.lines++;
    const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
    if (level >= ERROR_LEVEL || LOG_LEAKS.some((leak) => leak.test(line))) this.findings.push(line.slice(0, 2000));
  }

  /** The suspicious lines logged since the last call. */
  take(): string[] {
    const findings = this.findings;
    this.findings = [];
    return findings;
  }
}

/**
 * Builds the app and lists its routes as Fastify registers them. Fastify announces every new
 * instance on the `fastify.initialization` diagnostics channel before anything is registered on
 * it; an onRoute hook added there sees every route, Latchkey's and the project's, so a route
 * added later is fuzzed without an edit to the fuzzer.
 */
async function buildAppListingRoutes(latchkey: TestLatchkey, log: LogWatch): Promise<{ app: FastifyInstance; routes: FuzzRoute[] }> {
  const registered: FuzzRoute[] = [];
  const initialization = channel('fastify.initialization');
  let announced: FastifyInstance | undefined;
  const listen = (message: unknown): void => {
    if (announced) return;
    announced = (message as { fastify: FastifyInstance }).fastify;
    announced.addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat()) registered.push({ method, url: route.url });
    });
  };
  initialization.subscribe(listen);
  let app: FastifyInstance;
  try {
    app = await buildApp(latchkey, { logger: { level: 'info', stream: log } });
  } finally {
    initialization.unsubscribe(listen);
  }
  if (announced !== app) throw new Error('The fuzzer listened to another Fastify instance than the app it built.');
  await app.ready();
  return { app, routes: withoutHeadTwins(registered) };
}

/** Fastify adds a HEAD route beside each GET; it runs the same handler, so the GET is fuzzed and its twin left out. */
function withoutHeadTwins(routes: FuzzRoute[]): FuzzRoute[] {
  const seen = new Set<string>();
  const gets = new Set(routes.filter((route) => route.method === 'GET').map((route) => route.url));
  return routes.filter((route) => {
    const key = `${route.method} ${route.url}`;
    if (seen.has(key) || (route.method === 'HEAD' && gets.has(route.url))) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The walk runs in this many lanes at once (fuzz.test.ts), each with people of its own, so that a
 * lane that signs its user out of every session, or changes the user, never changes what another
 * lane's requests meet. Lanes overlap the database's round trips; on PostgreSQL that halves the walk.
 */
export const LANES = 4;

export interface FuzzSite {
  app: FastifyInstance;
  latchkey: TestLatchkey;
  routes: FuzzRoute[];
  log: LogWatch;
  /** The admin's mount path, `/admin/`. */
  adminRoot: string;
  anonymous: Identity;
  /** A fresh session of the lane's user (one route's fuzzing may sign it out), sent as cookie and as X-Session-Token. */
  userSession(lane: number): Promise<Identity>;
  /** The lane's user's API token (issued again after a DELETE /api/auth-token/ removed it). */
  userToken(lane: number): Promise<Identity>;
  /** A fresh session of the lane's staff superuser, for the admin. */
  staffSession(lane: number): Promise<Identity>;
  close(): Promise<void>;
}

const PASSWORD = 'a long enough passphrase';

/** A user with a verified address, an authenticator app and recovery codes (so that the MFA routes have something to show, check and refuse to remove), and a staff superuser. */
async function peopleOfLane(latchkey: TestLatchkey, lane: number): Promise<{ user: User; staff: User }> {
  const user = await latchkey.users.create({ username: `ada${lane}`, email: `ada${lane}@example.com`, password: PASSWORD, emailVerified: true });
  await activateTotpFor(latchkey, user);
  const staff = await latchkey.users.create({ username: `boss${lane}`, email: `boss${lane}@example.com`, password: PASSWORD, emailVerified: true, isStaff: true, isSuperuser: true });
  return { user, staff };
}

export async function startFuzzSite(kind: 'sqlite' | 'postgres'): Promise<FuzzSite> {
  const latchkey = await createTestLatchkey({
    kind,
    usernameType: projectSettings.USERNAME_TYPE,
    templateDirs: TEMPLATE_DIRS,
    settings: siteSettings(),
    adapter: (settings) => new AccountAdapter(settings),
    socialAdapter: (settings) => new SocialAccountAdapter(settings),
  });
  try {
    const people: { user: User; staff: User }[] = [];
    for (let lane = 0; lane < LANES; lane++) people.push(await peopleOfLane(latchkey, lane));
    const log = new LogWatch();
    const { app, routes } = await buildAppListingRoutes(latchkey, log);
    const sessionOf = async (name: string, person: User): Promise<Identity> => {
      const { cookieValue } = await latchkey.sessions.startSignedIn(person);
      return { name, cookies: { sessionid: cookieValue }, headers: { 'x-session-token': cookieValue } };
    };
    return {
      app,
      latchkey,
      routes,
      log,
      adminRoot: `/${latchkey.settings.ADMIN_URL}`,
      anonymous: { name: 'anonymous', cookies: {}, headers: {} },
      userSession: (lane) => sessionOf('signed in', people[lane]!.user),
      userToken: async (lane) => ({ name: 'token', cookies: {}, headers: { authorization: `Token ${await latchkey.apiTokens.issue(people[lane]!.user)}` } }),
      staffSession: (lane) => sessionOf('staff', people[lane]!.staff),
      // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
      close: () => latchkey.destroy(),
    };
  } catch (error) {
    await latchkey.destroy();
    throw error;
  }
}
