/**
 * The interactive API docs in Chromium against the example site: /api/docs/ (the API layer) and
 * /_allauth/openapi.html (the headless API). A visitor is sent to the login, which brings them
 * back; a staff member then sees Swagger UI, which the browser loads from this site alone, under
 * the page's Content-Security-Policy, without a console error; and "Try it out" sends a real
 * request with the staff member's session, the CSRF header included where it changes something.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useSuperuser } from './admin-journey.js';
import { browserTestsEnabled, expectNoConsoleErrors, screenshot } from './harness.js';
import { JOURNEY_TIMEOUT_MS, PASSWORD, Person, useSiteAndBrowser } from './journey.js';

/** Sends one operation from Swagger UI ("Try it out", then "Execute") and returns its status and request headers. */
async function tryOut(page: Page, operation: string, path: string): Promise<{ status: number; headers: Record<string, string> }> {
  const block = page.locator(`#${operation}`);
  await block.locator('.opblock-summary').click();
  await block.locator('button.try-out__btn').click();
  const answered = page.waitForResponse((response) => new URL(response.url()).pathname === path);
  await block.locator('button.execute').click();
  const response = await answered;
  return { status: response.status(), headers: response.request().headers() };
}

describe.runIf(browserTestsEnabled())('the interactive API docs', () => {
  const journey = useSiteAndBrowser();
  const keeper = useSuperuser(journey);

  it(
    'sends a visitor to the login and back, then shows staff both docs from this site alone, and tries requests with the session',
    async () => {
      const staff = await Person.open(journey.browser, journey.site, 'docs');
      const origins = new Set<string>();
      staff.page.on('request', (request) => origins.add(new URL(request.url()).origin));

      await staff.signIn(keeper, PASSWORD, { path: '/api/docs/', shot: 'api-docs-login' });
      expect(staff.pathname()).toBe('/api/docs/');
      await staff.page.locator('.opblock').first().waitFor();
      await screenshot(staff.page, 'docs-api');
      expect(await staff.page.locator('.opblock').count()).toBeGreaterThan(3);
      // Reading the signed-in user with the session.
      const me = await tryOut(staff.page, 'operations-users-users_me_retrieve', '/api/users/me/');
      expect(me.status).toBe(200);

      await staff.page.goto('/_allauth/openapi.html');
      await staff.page.locator('.opblock').first().waitFor();
      await screenshot(staff.page, 'docs-headless');
      expect(await staff.page.locator('#operations-Authentication-postAuthLogin').count()).toBe(1);
      // Signing out is a change: it carries X-CSRFToken, else the browser client would answer 403.
      const signOut = await tryOut(staff.page, 'operations-Authentication-deleteAuthSession', '/_allauth/browser/v1/auth/session');
      expect(signOut.headers['x-csrftoken']).toBeTruthy();
      expect(signOut.status).toBe(401);

      expect([...origins]).toEqual([journey.site.url]);
      // The 401 just asked for, and the favicon the site does not serve; nothing refused by the policy.
      expectNoConsoleErrors(staff.page, { allow: [/status of 401/, /status of 404/] });

      // Signed out now: the docs send the visitor to the login again.
      await staff.page.goto('/_allauth/openapi.html');
      expect(staff.pathname()).toBe('/accounts/login/');
      await staff.close();
    },
    JOURNEY_TIMEOUT_MS,
  );
});
