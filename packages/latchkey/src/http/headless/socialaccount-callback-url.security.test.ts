/**
 * A headless redirect sign-in's `callback_url` outside ASCII (issue 30), against a real OpenID
 * provider, on every database: the provider's callback answered 500 (ERR_INVALID_CHAR) sending the
 * browser back to it, though the session had been settled. A path on this site, or a URL at an
 * allowed front end, is followed percent-encoded as a browser would request it; one that may not be
 * followed (control characters, a path that serialises to another host) is refused as the start.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../../testing/database.js';
import { CORP_ACCOUNTS, FRONT_END, HeadlessSocialSite, startHeadlessCorpProvider } from '../../testing/headless-social.js';
import type { TestOidcProvider } from '../../testing/oidc-provider.js';
import { decodedValue, REDIRECT_TARGET_CASES } from '../../testing/redirect-targets.js';

let provider: TestOidcProvider;
beforeAll(async () => {
  provider = await startHeadlessCorpProvider(CORP_ACCOUNTS);
});
afterAll(() => provider.close());

describe.each(testDatabaseKinds())('headless callback_url outside ASCII on %s', (kind) => {
  let site: HeadlessSocialSite;
  afterEach(() => site.close());

  /** The whole round trip for `callback_url`: where the callback sends the browser, and whether it is then signed in. */
  async function signInReturningTo(callbackUrl: string): Promise<{ location: string | undefined; signedIn: boolean }> {
    const browser = site.client('browser');
    const location = await site.redirectSignIn(browser, 'ada-at-corp', { callback_url: callbackUrl });
    return { location, signedIn: (await browser.get('/auth/session')).status === 200 };
  }

  it('returns the browser to a path on this site, encoded, signed in; refuses one that may not be followed', async () => {
    site = await HeadlessSocialSite.create(kind, provider);
    for (const { name, wire, target } of REDIRECT_TARGET_CASES) {
      const callbackUrl = decodedValue(wire);
      if (target === undefined) {
        const refused = await site.startRedirect(site.client('browser'), { callback_url: callbackUrl });
        expect(refused.status, name).toBe(400);
        expect(refused.body.errors, name).toEqual([{ message: 'Invalid URL.', code: 'invalid_url', param: 'callback_url' }]);
        continue;
      }
      expect(await signInReturningTo(callbackUrl), name).toEqual({ location: target, signedIn: true });
    }
  });

  it('returns the browser to a URL at an allowed front end, encoded, signed in, and adds the error to it encoded too', async () => {
    site = await HeadlessSocialSite.create(kind, provider);
    const callbackUrl = `${FRONT_END}/callback/\u3002?q=\u00e9#\u00fc`;
    expect(await signInReturningTo(callbackUrl)).toEqual({ location: `${FRONT_END}/callback/%E3%80%82?q=%C3%A9#%C3%BC`, signedIn: true });
    const unknown = await site.startRedirect(site.client('browser'), { callback_url: callbackUrl, provider: 'nobody' });
    expect(unknown.status).toBe(302);
    expect(unknown.headers.location).toBe(`${FRONT_END}/callback/%E3%80%82?q=%C3%A9&error=unknown&error_process=login#%C3%BC`);
  });
});
