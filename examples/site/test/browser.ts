/**
 * A browser for the tests, over Fastify's inject(): it keeps the cookies each answer sets and
 * sends them back, and reads the CSRF token a page's form carries, as a person's browser would.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

/** The content type of a form POST. */
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A browser: it keeps the cookies each answer sets and sends them back. */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(private readonly app: FastifyInstance) {}

  async request(options: InjectOptions): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ ...options, headers: { host: 'testserver', ...options.headers }, cookies: Object.fromEntries(this.cookies) });
    for (const cookie of response.cookies) this.cookies.set(cookie.name, cookie.value);
    return response;
  }

  get(url: string): Promise<LightMyRequestResponse> {
    return this.request({ method: 'GET', url });
  }

  /** A form POST; the fields are pairs, so that a test can send one field twice. */
  post(url: string, fields: [string, string][]): Promise<LightMyRequestResponse> {
    return this.request({ method: 'POST', url, headers: FORM, payload: new URLSearchParams(fields).toString() });
  }
}

/** The CSRF token a page's form carries, as a browser would submit it. */
export function csrfTokenOf(html: string): string {
  const match = /<input type="hidden" name="csrfmiddlewaretoken" value="([^"]+)">/.exec(html);
  if (!match) throw new Error('The page has no CSRF token field.');
  return match[1]!;
}

/**
 * A sign-in through allauth's dummy provider (a stand-in identity provider on the site itself, for
 * tests and development only): the login page's Dummy link, its Continue button, the dummy page
 * filled in as `person`, and back to the callback, whose answer this is.
 */
export async function signInThroughDummy(browser: Browser, person: { id: string; email: string; name: string }): Promise<LightMyRequestResponse> {
  const confirm = await browser.get('/accounts/dummy/login/');
  const started = await browser.post('/accounts/dummy/login/', [['csrfmiddlewaretoken', csrfTokenOf(confirm.body)]]);
  const authorize = new URL(started.headers.location as string);
  const form = await browser.get(authorize.pathname + authorize.search);
  const answered = await browser.post(authorize.pathname, [
    ['csrfmiddlewaretoken', csrfTokenOf(form.body)],
    ['state', authorize.searchParams.get('state')!],
    ['redirect_uri', authorize.searchParams.get('redirect_uri')!],
    ['id', person.id],
    ['email', person.email],
    ['email_verified', 'true'],
    ['name', person.name],
    ['action', 'authenticate'],
  ]);
  const callback = new URL(answered.headers.location as string);
  return browser.get(callback.pathname + callback.search);
}
