import { headlessSpec } from '../../packages/latchkey/src/testing/headless.js';

/**
 * The headless API's browser client as a single-page app in a browser uses it, over real HTTP
 * against a running site: a cookie jar, the csrftoken cookie echoed in X-CSRFToken, JSON bodies.
 * Every answer is checked against allauth's published contract, so a journey that passes here is
 * one an app written for allauth can make.
 */

/* eslint-disable @typescript-eslint/no-explicit-any -- journeys read bodies freely; the contract check has vetted their shape */
export interface HttpAnswer {
  status: number;
  body: { status?: number; data?: any; meta?: any; errors?: { message: string; code: string; param?: string }[] };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

export class HeadlessBrowserClient {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly siteUrl: string) {}

  get = (path: string) => this.request('GET', path);
  post = (path: string, body?: unknown) => this.request('POST', path, body);
  put = (path: string, body?: unknown) => this.request('PUT', path, body);
  delete = (path: string, body?: unknown) => this.request('DELETE', path, body);

  async request(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<HttpAnswer> {
    const url = `/_allauth/browser/v1${path}`;
    if (method !== 'GET' && !this.cookies.has('csrftoken')) await this.request('GET', '/auth/session');
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
    if (method !== 'GET') headers['x-csrftoken'] = this.cookies.get('csrftoken') ?? '';
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.siteUrl}${url}`, { method, headers, redirect: 'manual', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    for (const cookie of response.headers.getSetCookie()) this.remember(cookie);
    const text = await response.text();
    const parsed = text === '' ? {} : (JSON.parse(text) as HttpAnswer['body']);
    const problems = headlessSpec().problems(method, url.split('?')[0]!, response.status, parsed);
    if (problems !== undefined) throw new Error(`${method} ${url} → ${response.status} breaks the contract: ${problems}\n${text}`);
    return { status: response.status, body: parsed };
  }

  private remember(setCookie: string): void {
    const [pair, ...attributes] = setCookie.split(';');
    const separator = pair!.indexOf('=');
    const name = pair!.slice(0, separator).trim();
    const value = pair!.slice(separator + 1).trim();
    const expired = attributes.some((attribute) => /^\s*max-age=(0|-)/i.test(attribute) || /^\s*expires=thu, 01 jan 1970/i.test(attribute));
    if (value === '' || expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

/** The flow a 401 says the login waits at. */
export function pendingFlow(answer: HttpAnswer): string | undefined {
  const flows = (answer.body.data?.flows ?? []) as { id: string; is_pending?: boolean }[];
  return flows.find((flow) => flow.is_pending === true)?.id;
}

export function isAuthenticated(answer: HttpAnswer): boolean {
  return answer.status === 200 && answer.body.meta?.is_authenticated === true;
}
