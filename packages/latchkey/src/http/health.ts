/**
 * GET /health/: whether this instance can serve, for a load balancer or an orchestrator. 200
 * `{"status":"ok","database":"ok","redis":"ok"}` when the database answers a trivial query and
 * Redis answers PING (`"redis":"not configured"` without REDIS_URL); 503 with `"unavailable"`
 * beside the one that did not. The body names no host, no error and no version: it may be
 * reachable from the internet, so it says only what a failing page would say anyway.
 *
 * It is exempt from ALLOWED_HOSTS (the route's `allowAnyHost`), because load balancers probe an
 * instance by its address, with a bare IP in the Host header. That is safe here: the answer is
 * the same whatever the host, nothing in it is built from the Host header, and it sets no cookie,
 * so a forged host can neither poison a link nor a cache entry. It is not rate-limited (nothing
 * here counts attempts), and never cached: a stale "ok" would keep traffic on a broken instance.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

export const HEALTH_PATH = '/health/';

/** How long one service may take to answer before it counts as unavailable. */
const CHECK_TIMEOUT_MS = 3000;

/** What the health check asks; each rejects when its service does not answer. */
export interface ServiceChecks {
  database: () => Promise<void>;
  /** Undefined when REDIS_URL is not set. */
  redis: (() => Promise<void>) | undefined;
}

type ServiceState = 'ok' | 'unavailable';

async function stateOf(name: string, check: () => Promise<void>, log: FastifyBaseLogger): Promise<ServiceState> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    // The reason goes to the log, for the operator; the answer says only which service failed.
    log.warn({ err: error }, `health check: ${name} unavailable`);
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthCheck(scope: FastifyInstance, checks: ServiceChecks): void {
  scope.get(HEALTH_PATH, { config: { allowAnyHost: true } }, async (request, reply) => {
    const [database, redis] = await Promise.all([
      stateOf('database', checks.database, request.log),
      checks.redis === undefined ? Promise.resolve('not configured' as const) : stateOf('redis', checks.redis, request.log),
    ]);
    const healthy = database === 'ok' && redis !== 'unavailable';
    return reply
      .code(healthy ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: healthy ? 'ok' : 'unavailable', database, redis });
  });
}
