import type { FastifyInstance } from 'fastify';
import { isLatchkeyError } from 'latchkey';
import { createTestLatchkey, testDatabaseKinds, testSettings, type TestLatchkey } from 'latchkey/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { ExampleAccountAdapter } from '../src/users/adapters.js';

const PASSWORD = 'a long enough passphrase';
const ALLOWLIST = { LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: 'example.com,example.org' };

function refusal(adapter: ExampleAccountAdapter, email: string): string | undefined {
  try {
    adapter.cleanEmail(email);
    return undefined;
  } catch (error) {
    if (!isLatchkeyError(error, 'invalid_email')) throw error;
    return error.message;
  }
}

describe('the example account adapter', () => {
  it('allows any domain while ACCOUNT_EMAIL_DOMAIN_ALLOWLIST is empty (the default)', () => {
    const adapter = new ExampleAccountAdapter(testSettings());
    expect(adapter.cleanEmail('someone@anywhere.net')).toBe('someone@anywhere.net');
  });

  it('allows exactly the listed domains, read from LATCHKEY_ACCOUNT_EMAIL_DOMAIN_ALLOWLIST', () => {
    const adapter = new ExampleAccountAdapter(testSettings({ env: ALLOWLIST }));
    expect(adapter.cleanEmail('ada@example.com')).toBe('ada@example.com');
    expect(adapter.cleanEmail('ada@example.org')).toBe('ada@example.org');
    for (const email of ['ada@example.net', 'ada@mail.example.com', 'ada@example.com.evil.net', 'ada@notexample.com']) {
      expect(refusal(adapter, email)).toBe('Sign-up is limited to addresses at: example.com, example.org.');
    }
  });
});

describe.each(testDatabaseKinds())('the example site signup with an allowlist on %s', (kind) => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  // Not app.close(): its onClose hook closes Latchkey, which destroy() does (and drops the database).
  afterEach(() => latchkey.destroy());

  async function setUp() {
    latchkey = await createTestLatchkey({ kind, env: ALLOWLIST, settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    // As src/server.ts passes it to createLatchkey; the test helper builds the default adapter.
    latchkey.deps.adapter = new ExampleAccountAdapter(latchkey.settings);
    app = await buildApp(latchkey);
    await app.ready();
  }

  /** A browser's round trip: the form's page sets the CSRF cookie, and the POST sends it back. */
  async function signup(email: string, username: string) {
    const page = await app.inject({ url: '/accounts/signup/', headers: { host: 'testserver' } });
    const csrf = page.cookies.find((cookie) => cookie.name === 'csrftoken')!.value;
    return app.inject({
      method: 'POST',
      url: '/accounts/signup/',
      headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded' },
      cookies: { csrftoken: csrf },
      payload: new URLSearchParams({ csrfmiddlewaretoken: csrf, email, username, password1: PASSWORD, password2: PASSWORD }).toString(),
    });
  }

  it('refuses another domain with a clear form error and stores nothing', async () => {
    await setUp();
    const refused = await signup('ada@elsewhere.net', 'ada');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Sign-up is limited to addresses at: example.com, example.org.');
    expect(await latchkey.deps.store.users.count()).toBe(0);
    expect(latchkey.mailer.outbox).toHaveLength(0);
  });

  it('signs up an address at a listed domain, in any case', async () => {
    await setUp();
    const accepted = await signup('Ada@EXAMPLE.org', 'ada');
    expect(accepted.statusCode).toBe(302);
    expect((await latchkey.deps.store.users.findByUsername('ada'))?.email).toBe('ada@example.org');
  });
});
