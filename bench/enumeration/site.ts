/**
 * The site the enumeration benchmarks probe, set up as a deployment would be where enumeration
 * matters most: production settings (template cache on, secure cookies), mandatory email
 * verification (the only mode in which signup hides whether an address has an account), and mail
 * that really goes out over SMTP to a local smtp-server. The database is a SQLite file in the
 * temporary directory with the production pragmas (WAL, synchronous=FULL: a commit waits for the
 * disk, so a path with more commits than the other shows), SQLite in memory (no disk: small
 * differences of work on the processor stand out of less noise), or a schema on TEST_DATABASE_URL's
 * PostgreSQL (a query over a connection lets the event loop run other work meanwhile, where
 * SQLite's synchronous driver never does: work wrongly run beside an answer shows only there).
 * Login by a mailed code is on, so that asking for a code can be probed too. Rate limits are off,
 * or the limiter would answer instead of the flows; argon2id runs with OWASP's minimum parameters
 * (m=19456 KiB, t=2, p=1) to keep the run short, the same on every path.
 */
import { openLatchkey, type InternalLatchkey } from '../../packages/latchkey/src/latchkey.js';
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { loadSettings, type SettingValues } from '../../packages/latchkey/src/index.js';
import { createMailer } from '../../packages/latchkey/src/mail/index.js';
import { createTestDatabase, type TestDatabase } from '../../packages/latchkey/src/testing/database.js';
import { startTestSmtpServer, type TestSmtpServer } from '../../packages/latchkey/src/testing/smtp.js';

export const HOST = 'bench.example';
/** The password of every account the benchmarks make, and of every signup they send. */
export const PASSWORD = 'a long enough passphrase';

export const BENCH_SETTINGS: Partial<SettingValues> = {
  ACCOUNT_EMAIL_VERIFICATION: 'mandatory',
  ACCOUNT_LOGIN_BY_CODE_ENABLED: true,
  ACCOUNT_RATE_LIMITS: false,
  ARGON2_MEMORY_COST: 19_456,
  ARGON2_TIME_COST: 2,
  ARGON2_PARALLELISM: 1,
};

/**
 * Without this pause the request after one that mailed (and so waited on the SMTP server) starts
 * in another state than the request after one that did not: an A/A run is clean, but a known
 * against an unknown reset address differed by about 4% of a millisecond (known faster, p < 0.01)
 * though both answer through the same code, and the difference went with a pause of 3 ms.
 */
const SETTLE_PAUSE_MS = 3;

export interface BenchSite {
  latchkey: InternalLatchkey;
  app: FastifyInstance;
  smtp: TestSmtpServer;
  /** A new browser: an empty cookie jar. */
  browser(): BenchBrowser;
  /**
   * Waits until the work a request left behind (mail sent after the answer, the outbox) is done,
   * so that it does not run into the next timed request and blur which path it belongs to, then
   * a moment more (SETTLE_PAUSE_MS), so that every timed request starts from an idle process.
   */
  settle: () => Promise<void>;
  close(): Promise<void>;
}

export type BenchDatabase = 'file' | 'memory' | 'postgres';

export async function createBenchSite(kind: BenchDatabase): Promise<BenchSite> {
  const smtp = await startTestSmtpServer();
  const settings = loadSettings(
    { USERNAME_TYPE: 'username', SITE_NAME: 'Bench', DOMAIN_NAME: HOST, base: BENCH_SETTINGS },
    {
      env: {
        NODE_ENV: 'production',
        LATCHKEY_SECRET_KEY: randomBytes(48).toString('base64url'),
        // The database and the mailer are passed in below; production only insists these are named.
        DATABASE_URL: 'sqlite::memory:',
        EMAIL_URL: smtp.url,
        LATCHKEY_ADMIN_URL: 'staff/',
      },
    },
  );
  let database: TestDatabase | undefined;
  try {
    database = kind === 'postgres' ? await createTestDatabase('postgres', settings.USERNAME_TYPE) : await createTestDatabase('sqlite', settings.USERNAME_TYPE, { sqliteFile: kind === 'file' });
    const mailer = createMailer({ url: smtp.url, defaultFrom: settings.DEFAULT_FROM_EMAIL });
    const latchkey = await openLatchkey({ settings, mailer, database, migrations: 'require' });
    const app = Fastify();
    app.addHook('onRequest', latchkey.allowedHostsGuard);
    await app.register(latchkey.plugin, { headless: true });
    await app.ready();
    const opened = database;
    return {
      latchkey,
      app,
      smtp,
      browser: () => new BenchBrowser(app),
      settle: async () => {
        await latchkey.deps.background.idle();
        await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
      },
      async close() {
        await app.close();
        await latchkey.close();
        await opened.destroy();
        await smtp.close();
      },
    };
  } catch (error) {
    await database?.destroy();
    await smtp.close();
    throw error;
  }
}

/**
 * A browser reduced to what the benchmarks need: a cookie jar, forms posted with the CSRF token
 * of its cookie, JSON for the headless API. It never waits for work left running after an answer:
 * the time of the answer is what an attacker sees.
 */
export class BenchBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly app: FastifyInstance) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.remember(await this.app.inject({ method: 'GET', url, headers: { host: HOST }, cookies: Object.fromEntries(this.cookies) }));
  }

  async postForm(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams({ csrfmiddlewaretoken: this.cookies.get('csrftoken') ?? '', ...fields });
    return this.remember(
      await this.app.inject({
        method: 'POST',
        url,
        payload: body.toString(),
        headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded' },
        cookies: Object.fromEntries(this.cookies),
      }),
    );
  }

  /** The headless API's app client: no cookies, no CSRF. */
  async postJson(url: string, body: Record<string, unknown>): Promise<LightMyRequestResponse> {
    return this.app.inject({ method: 'POST', url, payload: JSON.stringify(body), headers: { host: HOST, 'content-type': 'application/json' } });
  }

  private remember(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }
}

/** Milliseconds `work` takes, by the monotonic clock. */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - started) / 1e6, value };
}
