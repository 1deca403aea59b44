import Fastify, { type FastifyInstance } from 'fastify';
import { handleUnexpectedError, type Latchkey } from 'latchkey';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The example project's web app: Latchkey mounted as one plugin, and the project's own pages
 * beside it. Returned before `ready()` so that a caller can add routes (tests do).
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
  await app.register(latchkey.plugin);

  app.get('/', async (request, reply) => {
    const user = await latchkey.currentUser(request);
    const who = user ? `Signed in as ${escapeHtml(user.username ?? user.email)}.` : 'You are not signed in.';
    const siteName = escapeHtml(settings.SITE_NAME);
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', user ? 'no-store' : 'no-cache')
      .send(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${siteName}</title></head>
<body>
<main>
<h1>${siteName}</h1>
<p>${who}</p>
</main>
</body>
</html>
`);
  });
  return app;
}
