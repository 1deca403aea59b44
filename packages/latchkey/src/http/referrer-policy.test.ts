/**
 * Every answer of Latchkey's routes carries `Referrer-Policy: same-origin` (http/kit/referrer-policy.ts):
 * pages with a form and without, redirects, the password reset link, the admin, the headless API
 * (browser and app clients), the token API and its reference pages, refusals, and the error page of
 * a project's route inside the plugin. Nothing of the site leaves it in a Referer, and the site's
 * own forms still carry the Origin the CSRF check needs.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../account/users.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { PageClient } from '../testing/pages.js';

describe('Referrer-Policy', () => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  it('is same-origin on every answer of every door, whatever the status', async () => {
    latchkey = await createTestLatchkey({ settings: { ACCOUNT_EMAIL_VERIFICATION: 'optional', HEADLESS_SERVE_SPECIFICATION: true } });
    browser = await PageClient.create(latchkey, {
      plugin: {
        headless: true,
        api: {},
        routes: (scope) => {
          scope.get('/fails/', () => {
            throw new Error('a project route failing');
          });
        },
      },
    });
    await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: 'a long enough passphrase', emailVerified: true, isStaff: true, isSuperuser: true });
    await browser.post('/accounts/password/reset/', { email: 'ada@example.com' });
    const resetLink = /\/accounts\/password\/reset\/key\/[^\s"]+\//.exec(latchkey.mailer.outbox[0]!.text)![0];
    const link = await browser.get(resetLink);
    const answers: Record<string, LightMyRequestResponse> = {
      'a page with a form': await browser.get('/accounts/login/'),
      'a page without a form': await browser.get('/accounts/inactive/'),
      'a page without a form, after a reset is asked for': await browser.get('/accounts/password/reset/done/'),
      'the reset link (a redirect)': link,
      'the reset form': await browser.get(link.headers.location!),
      'a refused form (400)': await browser.post('/accounts/login/', { login: 'ada', password: 'wrong' }),
      'a CSRF refusal (403)': await browser.post('/accounts/login/', { login: 'ada', password: 'wrong' }, { csrf: false }),
      'a signed-out redirect': await browser.get('/accounts/email/'),
      'the stylesheet': await browser.get('/static/latchkey/latchkey.css'),
      "the admin's login": await browser.get('/admin/login/'),
      "the admin's redirect to it": await browser.get('/admin/'),
      'the headless API (browser)': await browser.get('/_allauth/browser/v1/config'),
      'the headless API, unauthenticated (401)': await browser.get('/_allauth/browser/v1/auth/session'),
      'the headless API (app)': await browser.get('/_allauth/app/v1/config'),
      "the headless API's reference": await browser.get('/_allauth/openapi.html'),
      'the token API, refusing (400)': await browser.app.inject({ method: 'POST', url: '/api/auth-token/', headers: { host: 'testserver', 'content-type': 'application/json' }, payload: '{}' }),
      'the token API schema': await browser.get('/api/schema/'),
      'an unexpected error (500)': await browser.get('/fails/'),
    };
    for (const [what, answer] of Object.entries(answers)) {
      expect(answer.headers['referrer-policy'], `${what} (${answer.statusCode})`).toBe('same-origin');
    }
    expect(answers['a page without a form']!.statusCode).toBe(200);
    expect(answers['the reset link (a redirect)']!.statusCode).toBe(302);
    expect(answers['the reset form']!.statusCode).toBe(200);
    expect(answers['a CSRF refusal (403)']!.statusCode).toBe(403);
    expect(answers['an unexpected error (500)']!.statusCode).toBe(500);
  });
});
