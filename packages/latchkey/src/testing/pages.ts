import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import type { LatchkeyPluginOptions } from '../http/plugin.js';
import type { TestLatchkey } from './latchkey.js';

/**
 * A Fastify app with Latchkey mounted, and a cookie jar, for page tests through inject(): a test
 * reads a form's CSRF token from the page it GETs and posts it back, as a browser would.
 */
export class PageClient {
  readonly cookies = new Map<string, string>();

  private constructor(
    readonly app: FastifyInstance,
    private readonly latchkey: TestLatchkey,
    private readonly waitForBackground: boolean,
    /** The address this browser connects from (inject's default, 127.0.0.1, when undefined). */
    private readonly remoteAddress?: string,
  ) {}

  /**
   * With `waitForBackground` (the default) every request returns only once the work it left
   * running (mail sent after the answer) has finished, as it would have by the time a person looks.
   * `plugin` is what the project passes to latchkey.plugin (its own routes, the headless API).
   */
  static async create(latchkey: TestLatchkey, options: { waitForBackground?: boolean; plugin?: LatchkeyPluginOptions } = {}): Promise<PageClient> {
    const app = Fastify();
    app.addHook('onRequest', latchkey.allowedHostsGuard);
    await app.register(latchkey.plugin, options.plugin ?? {});
    await app.ready();
    return new PageClient(app, latchkey, options.waitForBackground ?? true);
  }

  /** A second browser on the same app, with its own cookies, at this one's address or at `ip`. */
  another(options: { ip?: string } = {}): PageClient {
    return new PageClient(this.app, this.latchkey, this.waitForBackground, options.ip ?? this.remoteAddress);
  }

  private get from(): { remoteAddress?: string } {
    return this.remoteAddress === undefined ? {} : { remoteAddress: this.remoteAddress };
  }

  private async settle(response: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    if (this.waitForBackground) await this.latchkey.deps.background.idle();
    return response;
  }

  private remember(response: LightMyRequestResponse): void {
    for (const cookie of response.cookies) {
      if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ method: 'GET', url, headers: { host: 'testserver', ...headers }, cookies: Object.fromEntries(this.cookies), ...this.from });
    this.remember(response);
    return this.settle(response);
  }

  /** POSTs a form with this browser's CSRF token (from its csrftoken cookie) unless `csrf` is false. */
  async post(url: string, fields: Record<string, string>, options: { csrf?: boolean; headers?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
    if (options.csrf !== false && !this.cookies.has('csrftoken')) await this.get(this.latchkey.urlFor('account_login'));
    const body = new URLSearchParams({ ...(options.csrf === false ? {} : { csrfmiddlewaretoken: this.cookies.get('csrftoken') ?? '' }), ...fields });
    const response = await this.app.inject({
      method: 'POST',
      url,
      payload: body.toString(),
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
      cookies: Object.fromEntries(this.cookies),
      ...this.from,
    });
    this.remember(response);
    return this.settle(response);
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}

/**
 * A page's own content, `<main>`, without the layout around it (the header's links, the language
 * switch's form in the footer): for a test of what the page itself asks or carries.
 */
export function mainOf(html: string): string {
  return /<main[\s\S]*<\/main>/.exec(html)?.[0] ?? '';
}
