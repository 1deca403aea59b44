import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATIC_PATH } from '../../config/url-names.js';
import { pageGuards } from '../guards.js';
import type { HttpContext } from './context.js';
import { csrfOptionsFrom, csrfToken } from './csrf.js';
import { escapeHtml } from './reference-page.js';
import { requestUser } from './request-user.js';

/**
 * The interactive API docs: /api/docs/ (the API layer) and /_allauth/openapi.html (the headless
 * API) are Swagger UI on the OpenAPI document each serves for tools. Swagger UI's files come from
 * the copy @fastify/swagger-ui ships (without swagger-ui-dist's install-time telemetry), served by
 * this site with Latchkey's static files, and the page
 * starts it with static/api-docs.js: nothing inline and nothing from another origin, so the page's
 * policy allows this site alone. Its "Try it out" sends real requests as the person reading, so
 * the page is for signed-in staff: a visitor is sent to the login and back, anyone else gets 403.
 */

/** Where Swagger UI's two files are served, under Latchkey's static path. */
export const SWAGGER_UI_PATH = `${STATIC_PATH}swagger-ui/`;
const SWAGGER_UI_FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
};

/**
 * This site only: Swagger UI's script and styles, the document and the requests tried from the
 * page. `img-src data:` is for the icons Swagger UI's stylesheet carries inline.
 */
export const INTERACTIVE_DOCS_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const swaggerUiRoot = (): string => join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui/package.json')), 'static');

/** Swagger UI's script and stylesheet, read once; a browser keeps them a day, as Latchkey's own static files. */
export function registerInteractiveDocsAssets(mount: FastifyInstance): void {
  const contents = new Map<string, Promise<Buffer>>();
  for (const [file, type] of Object.entries(SWAGGER_UI_FILES)) {
    mount.get(`${SWAGGER_UI_PATH}${file}`, async (_request, reply) => {
      let content = contents.get(file);
      if (content === undefined) {
        content = readFile(join(swaggerUiRoot(), file));
        contents.set(file, content);
      }
      return reply.header('cache-control', 'public, max-age=86400').header('x-content-type-options', 'nosniff').type(type).send(await content);
    });
  }
}

export interface InteractiveDocsPage {
  title: string;
  /** The OpenAPI document the page shows (a path of this site, under URL_PREFIX). */
  documentUrl: string;
  /** Links in the header: the machine-readable forms of the same document. */
  links: { href: string; text: string }[];
}

export function interactiveDocsHtml(ctx: HttpContext, page: InteractiveDocsPage): string {
  const { urls, settings } = ctx.deps;
  const title = escapeHtml(page.title);
  const links = page.links.map((link) => `<a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${escapeHtml(urls.static('swagger-ui/swagger-ui.css'))}">
<link rel="stylesheet" href="${escapeHtml(urls.static('latchkey.css'))}">
</head>
<body>
<header class="lk-header"><span class="lk-brand">${title}</span><nav class="lk-nav">${links}</nav></header>
<main id="api-docs" data-document-url="${escapeHtml(page.documentUrl)}" data-url-prefix="${escapeHtml(settings.URL_PREFIX)}"><noscript><p class="lk-main">These docs run in the browser: turn JavaScript on, or read the document itself from the links above.</p></noscript></main>
<script src="${escapeHtml(urls.static('swagger-ui/swagger-ui-bundle.js'))}"></script>
<script src="${escapeHtml(urls.static('api-docs.js'))}"></script>
</body>
</html>
`;
}

const NO_LOGIN_PAGE =
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>403 Forbidden</title></head>' +
  '<body><h1>403 Forbidden</h1><p>Sign in as a staff member through this site&#39;s front end, then open this page again.</p></body></html>\n';

/**
 * Signed-in staff only, as the page guards say it: a visitor to the login page (which brings them
 * back), a signed-in user who is not staff to a 403. Under HEADLESS_ONLY there is no login page to
 * send anyone to, so a visitor gets the 403 too, saying where to sign in.
 */
function staffOnly(ctx: HttpContext): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const staff = pageGuards(ctx).staff;
  return async (request, reply) => {
    if (ctx.deps.settings.HEADLESS_ONLY && (await requestUser(ctx.sessions, request)) === undefined) {
      await reply.code(403).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NO_LOGIN_PAGE);
      return;
    }
    await staff(request, reply);
  };
}

/**
 * Registers the page at `url` of `scope`. The page is the same for everybody who may see it; the
 * answer makes sure the browser holds the CSRF cookie that "Try it out" copies into X-CSRFToken,
 * and is never cached.
 */
export function registerInteractiveDocsPage(scope: FastifyInstance, ctx: HttpContext, url: string, page: InteractiveDocsPage): void {
  const html = interactiveDocsHtml(ctx, page);
  scope.get(url, { preHandler: staffOnly(ctx) }, async (request, reply) => {
    csrfToken(request, reply, csrfOptionsFrom(ctx.deps.settings));
    return reply
      .header('cache-control', 'no-store')
      .header('content-security-policy', INTERACTIVE_DOCS_POLICY)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .type('text/html; charset=utf-8')
      .send(html);
  });
}
