/**
 * One person talking to the instances of a cluster (cluster.ts) directly, not through its proxy:
 * each request names the instance it goes to, so a test knows which process answered without
 * trusting anything in between. A cookie jar shared by every instance, as a browser's is for one
 * site, and a loopback address of its own (visitor.ts's nextClientAddress), which the instances
 * see as the client's, so that per-IP rate limits of one person never touch another's.
 *
 * Plain node:http rather than fetch: fetch cannot choose the local address.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { nextClientAddress, rememberCookie } from './visitor.js';

const HEADLESS_PREFIX = '/_allauth/browser/v1';
const REQUEST_TIMEOUT_MS = 30_000;

/** Where a request goes: an instance of the cluster (SiteInstance), by its own address. */
export interface Instance {
  url: string;
}

export interface DirectReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /* eslint-disable-next-line @typescript-eslint/no-explicit-any -- journeys read bodies freely */
  json(): any;
}

export interface DirectSendOptions {
  json?: unknown;
  /** A form's fields; a list is sent as the field repeated (checkboxes). */
  form?: Record<string, string | string[]>;
  /** `cookie` among them replaces the jar's cookies for this request. */
  headers?: Record<string, string>;
}

export class DirectVisitor {
  private readonly cookies = new Map<string, string>();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });

  constructor(readonly address: string = nextClientAddress()) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Puts a cookie in the jar by hand: a cookie copied from another browser, say. */
  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  async send(instance: Instance, method: string, path: string, options: DirectSendOptions = {}): Promise<DirectReply> {
    const headers: Record<string, string> = { ...options.headers };
    // A Cookie header given here is sent as it is, instead of the jar's: a credential copied by hand.
    if (this.cookies.size > 0 && headers.cookie === undefined) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    } else if (options.form !== undefined) {
      const form = new URLSearchParams();
      for (const [name, value] of Object.entries(options.form)) for (const one of ([] as string[]).concat(value)) form.append(name, one);
      body = form.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const reply = await this.exchange(new URL(path, instance.url), method, headers, body);
    for (const setCookie of ([] as string[]).concat(reply.headers['set-cookie'] ?? [])) this.remember(setCookie);
    return reply;
  }

  /**
   * A request to the headless API's browser client, as a single-page app sends it: JSON, and the
   * csrftoken cookie echoed in X-CSRFToken on changes (fetched first when the jar has none).
   */
  async headless(instance: Instance, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: { json?: unknown; headers?: Record<string, string> } = {}): Promise<DirectReply> {
    if (method !== 'GET' && !this.cookies.has('csrftoken')) await this.send(instance, 'GET', `${HEADLESS_PREFIX}/auth/session`);
    const headers = { ...options.headers, ...(method === 'GET' ? {} : { 'x-csrftoken': this.cookies.get('csrftoken') ?? '' }) };
    return this.send(instance, method, `${HEADLESS_PREFIX}${path}`, { ...options, headers });
  }

  /** Closes the visitor's connections. */
  close(): void {
    this.agent.destroy();
  }

  private exchange(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Promise<DirectReply> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, headers, agent: this.agent, localAddress: this.address, timeout: REQUEST_TIMEOUT_MS },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', reject);
          incoming.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: text, json: () => JSON.parse(text) as unknown });
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${url.href}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  private remember(setCookie: string): void {
    rememberCookie(this.cookies, setCookie);
  }
}
