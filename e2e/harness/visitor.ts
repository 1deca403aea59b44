/**
 * One person at the site behind the proxy (cluster.ts): a cookie jar, and a machine of their own.
 * Each visitor connects from an address of its own on the loopback network (127.0.0.0/8 is all
 * loopback on Linux), so the proxy forwards a different X-Forwarded-For for each and the site's
 * per-IP rate limits see different people, as they would on the internet. A step can be pinned
 * to an instance (`on`), which the proxy honours (X-Upstream) and the visitor checks.
 *
 * Plain node:http rather than fetch: fetch cannot choose the local address.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { UPSTREAM_HEADER } from './round-robin-proxy.js';

const HEADLESS_PREFIX = '/_allauth/browser/v1';
const REQUEST_TIMEOUT_MS = 30_000;

let lastAddress = 256;
/** A loopback address no other visitor of this process has: 127.0.1.1, 127.0.1.2, ... */
export function nextClientAddress(): string {
  lastAddress += 1;
  if (lastAddress % 256 === 0) lastAddress += 1;
  return `127.0.${Math.floor(lastAddress / 256) % 256}.${lastAddress % 256}`;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Which instance answered (the proxy's X-Upstream). */
  instance: number;
  /* eslint-disable-next-line @typescript-eslint/no-explicit-any -- journeys read bodies freely */
  json(): any;
}

export interface SendOptions {
  /** The instance to send it to; round-robin when left out. */
  on?: number;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

export class Visitor {
  private readonly cookies = new Map<string, string>();
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });

  constructor(
    private readonly siteUrl: string,
    readonly address: string = nextClientAddress(),
  ) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** Puts a cookie in the jar by hand: a cookie copied from another browser, say. */
  setCookie(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  async send(method: string, path: string, options: SendOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    if (options.on !== undefined) headers[UPSTREAM_HEADER] = String(options.on);
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    } else if (options.form !== undefined) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const reply = await this.exchange(method, path, headers, body);
    for (const setCookie of ([] as string[]).concat(reply.headers['set-cookie'] ?? [])) this.remember(setCookie);
    if (options.on !== undefined && reply.instance !== options.on) {
      throw new Error(`${method} ${path} was meant for instance ${options.on} but instance ${reply.instance} answered.`);
    }
    return reply;
  }

  /**
   * A request to the headless API's browser client, as a single-page app sends it: JSON, and the
   * csrftoken cookie echoed in X-CSRFToken on changes (fetched first when the jar has none).
   */
  async headless(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, options: { on?: number; json?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> {
    if (method !== 'GET' && !this.cookies.has('csrftoken')) await this.send('GET', `${HEADLESS_PREFIX}/auth/session`, { on: options.on });
    const headers = { ...options.headers, ...(method === 'GET' ? {} : { 'x-csrftoken': this.cookies.get('csrftoken') ?? '' }) };
    return this.send(method, `${HEADLESS_PREFIX}${path}`, { ...options, headers });
  }

  /** Closes the visitor's connections. */
  close(): void {
    this.agent.destroy();
  }

  private exchange(method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<Reply> {
    const url = new URL(path, this.siteUrl);
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, headers, agent: this.agent, localAddress: this.address, timeout: REQUEST_TIMEOUT_MS },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', reject);
          incoming.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              body: text,
              instance: Number(incoming.headers[UPSTREAM_HEADER] ?? -1),
              json: () => JSON.parse(text) as unknown,
            });
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  private remember(setCookie: string): void {
    rememberCookie(this.cookies, setCookie);
  }
}

/** Keeps a Set-Cookie in a cookie jar, as a browser does: an empty or expired one removes the cookie. */
export function rememberCookie(cookies: Map<string, string>, setCookie: string): void {
  const [pair = '', ...attributes] = setCookie.split(';');
  const separator = pair.indexOf('=');
  const name = pair.slice(0, separator).trim();
  const value = pair.slice(separator + 1).trim();
  const expired = attributes.some((attribute) => /^\s*max-age=(0|-)/i.test(attribute) || /^\s*expires=thu, 01 jan 1970/i.test(attribute));
  if (value === '' || expired) cookies.delete(name);
  else cookies.set(name, value);
}
