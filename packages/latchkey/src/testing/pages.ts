import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import type { TestLatchkey } from './latchkey.js';

/**
 * A Fastify app with Latchkey mounted, and a cookie jar, for page tests through inject(): a test
 * reads a form's CSRF token from the page it GETs and posts it back, as a browser would.
 */
export class PageClient {
  readonly cookies = new Map<string, string>();

  private constructor(readonly app: FastifyInstance) {}

  static async create(latchkey: TestLatchkey): Promise<PageClient> {
    const app = Fastify();
    app.addHook('onRequest', latchkey.allowedHostsGuard);
    await app.register(latchkey.plugin);
    await app.ready();
    return new PageClient(app);
  }

  /** A second browser on the same app, with its own cookies. */
  another(): PageClient {
    return new PageClient(this.app);
  }

  private remember(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ method: 'GET', url, headers: { host: 'testserver', ...headers }, cookies: Object.fromEntries(this.cookies) });
    this.remember(response);
    return response;
  }

  /** POSTs a form with this browser's CSRF token (from its csrftoken cookie) unless `csrf` is false. */
  async post(url: string, fields: Record<string, string>, options: { csrf?: boolean; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
    if (options.csrf !== false && !this.cookies.has('csrftoken')) await this.get('/accounts/login/');
    const body = new URLSearchParams({ ...(options.csrf === false ? {} : { csrfmiddlewaretoken: this.cookies.get('csrftoken') ?? '' }), ...fields });
    const response = await this.app.inject({
      method: 'POST',
      url,
      payload: body.toString(),
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
      cookies: Object.fromEntries(this.cookies),
    });
    this.remember(response);
    return response;
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}
