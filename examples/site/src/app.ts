import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { handleUnexpectedError, type Latchkey } from 'latchkey';

/** The project's own templates: searched before Latchkey's, so a file here overrides one there. */
export const TEMPLATE_DIRS = [fileURLToPath(new URL('../templates', import.meta.url))];

/**
 * The example project's web app: Latchkey mounted as one plugin, and the project's own pages
 * registered inside it (so they share its layout, sessions and CSRF protection). Returned before
 * `ready()` so that a caller can add routes (tests do).
 */
export async function buildApp(latchkey: Latchkey, options: { logger?: boolean } = {}): Promise<FastifyInstance> {
  const { settings } = latchkey;
  const app = Fastify({
    logger: options.logger ?? false,
    // X-Forwarded-For is believed only for as many hops as the operator says proxies add, so a
    // client cannot pick its own IP address (and escape per-IP rate limits) by sending one.
    trustProxy: (_address: string, hop: number) => hop < settings.TRUST_PROXY_HOPS,
    bodyLimit: 1024 * 1024,
  });
  app.addHook('onRequest', latchkey.allowedHostsGuard);
  app.setErrorHandler(handleUnexpectedError);
  app.addHook('onClose', () => latchkey.close());
  await app.register(latchkey.plugin, {
    routes(scope) {
      scope.get('/', (request, reply) => latchkey.renderPage(request, reply, 'pages/home.html'));
    },
  });
  // Browsers ask for it on every page; answering keeps their consoles (and the logs) clean.
  app.get('/favicon.ico', (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());
  return app;
}
