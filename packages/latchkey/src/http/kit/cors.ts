import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export interface CorsOptions {
  /** Origins exactly as browsers send them (CORS_ALLOWED_ORIGINS); none by default. */
  origins: readonly string[];
  /** Request headers a front end may send besides the CORS-safelisted ones. */
  allowHeaders: readonly string[];
  methods: readonly string[];
}

const PREFLIGHT_MAX_AGE_SECONDS = 600;
/** Beyond the CORS-safelisted response headers: how long a 429 asks the front end to wait. */
const EXPOSED_HEADERS = ['retry-after'];

function allowedOrigin(request: FastifyRequest, options: CorsOptions): string | undefined {
  const origin = request.headers.origin;
  return typeof origin === 'string' && options.origins.includes(origin) ? origin : undefined;
}

/**
 * Cross-origin access, with credentials, for the front ends the project names, and for nobody
 * else: a request from another origin gets no CORS headers, so the browser keeps the response
 * from the page that asked. Preflights are answered here, before any route runs.
 *
 * This only decides what a browser lets a page read. It admits nobody: a state-changing request
 * from an allowed origin still needs the CSRF token (browser client) or the session token (app).
 */
export function allowCors(scope: FastifyInstance, options: CorsOptions): void {
  scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // Caches must keep one answer per Origin: the headers below differ between origins.
    reply.header('vary', 'Origin');
    const origin = allowedOrigin(request, options);
    if (origin === undefined) return;
    reply
      .header('access-control-allow-origin', origin)
      .header('access-control-allow-credentials', 'true')
      .header('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
  });
  scope.options('/*', async (request, reply) => {
    if (allowedOrigin(request, options) !== undefined) {
      reply
        .header('access-control-allow-methods', options.methods.join(', '))
        .header('access-control-allow-headers', ['content-type', ...options.allowHeaders].join(', '))
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    return reply.code(204).send();
  });
}
