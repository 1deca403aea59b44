/**
 * The production log keeps no secret (issue 19, finding 1). The example site runs as `npm start`
 * runs it, in production mode with request logging on, and a person signs up, confirms their
 * address from the mailed link, forgets their password and resets it from the mailed link, as
 * plain HTTP (no browser needed: what matters is what the server writes). Then the captured log
 * is searched for every key, token and cookie the journey used: none may be there, and the
 * redacted routes must be (so the search is known to be looking at the right lines).
 */
import { describe, expect, it } from 'vitest';
import { deployedDatabase, linkFromEmail, startSite, type RunningSite, type TestSmtpServer } from './harness.js';
import { FAST_HASHING_ENV, NEW_PASSWORD, newAccount, waitForEmail } from './journey.js';

/** A person's browser reduced to what the forms need: a cookie jar, the CSRF token, no redirects followed. */
class FormClient {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly site: RunningSite) {}

  cookieValues(): string[] {
    return [...this.cookies.values()];
  }

  get(pathOrUrl: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.send('GET', pathOrUrl, undefined, headers);
  }

  post(pathOrUrl: string, fields: Record<string, string>): Promise<Response> {
    return this.send('POST', pathOrUrl, new URLSearchParams({ csrfmiddlewaretoken: this.cookies.get('csrftoken') ?? '', ...fields }));
  }

  private async send(method: string, pathOrUrl: string, body: URLSearchParams | undefined, extra: Record<string, string> = {}): Promise<Response> {
    const url = new URL(pathOrUrl, this.site.url);
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '), ...extra };
    if (body) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers.origin = this.site.url;
    }
    const response = await fetch(url, { method, headers, body, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const separator = pair!.indexOf('=');
      const value = pair!.slice(separator + 1);
      if (value === '') this.cookies.delete(pair!.slice(0, separator));
      else this.cookies.set(pair!.slice(0, separator), value);
    }
    return response;
  }
}

/** The key at the end of a mailed link: `/accounts/confirm-email/<key>/`. */
function keyOf(link: string): string {
  return decodeURIComponent(new URL(link).pathname.split('/').filter(Boolean).at(-1)!);
}

async function mailedLink(smtp: TestSmtpServer, to: string, subject: string, pathPrefix: string): Promise<string> {
  return linkFromEmail(await waitForEmail(smtp, { to, subject }), pathPrefix);
}

describe('the production log', () => {
  it('after a signup, an address confirmation and a password reset, holds none of their keys, tokens or cookies', { timeout: 120_000 }, async () => {
    const site = await startSite({ production: true, database: deployedDatabase(), env: FAST_HASHING_ENV });
    try {
      const ada = newAccount('ada');
      const person = new FormClient(site);

      await person.get('/accounts/signup/');
      const signedUp = await person.post('/accounts/signup/', { username: ada.username, email: ada.email, password1: ada.password, password2: ada.password });
      expect(signedUp.status).toBe(302);
      const confirmLink = await mailedLink(site.smtp, ada.email, 'Please confirm your email address', '/accounts/confirm-email/');
      const confirmKey = keyOf(confirmLink);
      expect((await person.get(confirmLink)).status).toBe(200);
      expect((await person.post(confirmLink, {})).status).toBe(302);

      const stranger = new FormClient(site);
      await stranger.get('/accounts/password/reset/');
      expect((await stranger.post('/accounts/password/reset/', { email: ada.email })).status).toBe(302);
      const resetLink = await mailedLink(site.smtp, ada.email, 'Password reset', '/accounts/password/reset/key/');
      const resetKey = keyOf(resetLink);
      // A copy of the link that lost its last slash (404), and one pasted with a query string.
      expect((await stranger.get(resetLink.replace(/\/$/, ''))).status).toBe(404);
      const toForm = await stranger.get(resetLink);
      expect(toForm.status).toBe(302);
      const formPath = toForm.headers.get('location')!;
      expect((await stranger.get(formPath)).status).toBe(200);
      expect((await stranger.post(formPath, { password1: NEW_PASSWORD, password2: NEW_PASSWORD })).status).toBe(302);
      await waitForEmail(site.smtp, { to: ada.email, subject: 'Your password has been reset' });

      // Credentials in headers and query strings, as API and app clients send them.
      await person.get(`/accounts/login/?token=${resetKey}&code=${confirmKey}`, { authorization: `Token ${resetKey}`, 'x-session-token': confirmKey });

      const secrets = { resetKey, confirmKey, ...Object.fromEntries([...person.cookieValues(), ...stranger.cookieValues()].map((value, index) => [`cookie ${index}`, value])) };
      await site.stop();
      const log = site.output().stdout;
      // The log is pino's JSON lines, one per request event: the search is over those.
      expect(log).toContain('"msg":"incoming request"');
      for (const [name, secret] of Object.entries(secrets)) expect(log.includes(secret), `${name} is in the log`).toBe(false);
      expect(log).toContain('"url":"/accounts/password/reset/key/[redacted]/"');
      expect(log).toContain('"url":"/accounts/confirm-email/[redacted]/"');
      expect(log).toContain('Route GET:/accounts/password/reset/key/[redacted] not found');
      expect(log).toContain('"url":"/accounts/login/?token=[redacted]&code=[redacted]"');
    } finally {
      await site.stop();
    }
  });
});
