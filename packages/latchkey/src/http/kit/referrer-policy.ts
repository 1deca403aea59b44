import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * The Referrer-Policy of every answer of Latchkey's routes (the account pages, the admin, the
 * headless API, the token API, and a project's routes registered inside the plugin), set once in
 * http/plugin.ts: `same-origin`, as Django's SECURE_REFERRER_POLICY default. No address of this
 * site (a page's query, a reset link) ever leaves it in a Referer.
 *
 * Not `no-referrer`, which would break the site's own forms: a browser posts a form, or a script's
 * fetch, from a `no-referrer` page with `Origin: null` (Fetch, "append a request Origin header"),
 * which the CSRF check refuses (kit/csrf.ts); and a browser that sends no Origin at all (older ones,
 * on a same-origin form) is checked over HTTPS by its Referer, as Django's is, which `no-referrer`
 * withholds. `same-origin` keeps both for requests to this site. The mailed reset key is kept out of Referers all the same: its URL only
 * redirects, and a redirect's URL never becomes a Referer (docs/security.md, docs/production.md).
 */
export const REFERRER_POLICY = 'same-origin';

/** An onRequest hook of Latchkey's scope: set before any handler, so that every answer has it, refusals and error pages included. */
export function sendReferrerPolicy(_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  reply.header('referrer-policy', REFERRER_POLICY);
  done();
}
