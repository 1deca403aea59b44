import { describe, expect, it } from 'vitest';
import { createUrlRedactor, keyedPrefixesOf, redactUrlsInText } from './log-redaction.js';

const redact = createUrlRedactor();
const KEY = 'MQ:1vA9xx:Zk3l_secretKEY-value';

describe('redacting a URL for the log', () => {
  it('hides the key of a password-reset or email-confirmation link, keeping the route', () => {
    expect(redact(`/accounts/password/reset/key/${KEY}/`)).toBe('/accounts/password/reset/key/[redacted]/');
    expect(redact(`/accounts/confirm-email/${KEY}/`)).toBe('/accounts/confirm-email/[redacted]/');
    expect(redact(`/accounts/password/reset/key/4-set-password/`)).toBe('/accounts/password/reset/key/[redacted]/');
  });

  it('hides the key of a mistyped link too (no trailing slash, other case, doubled slashes, escaped letters)', () => {
    expect(redact(`/accounts/confirm-email/${KEY}`)).toBe('/accounts/confirm-email/[redacted]');
    expect(redact(`/ACCOUNTS/Confirm-Email/${KEY}/`)).toBe('/ACCOUNTS/Confirm-Email/[redacted]/');
    expect(redact(`//accounts//password/reset/key/${KEY}/x`)).toBe('//accounts//password/reset/key/[redacted]/x');
    expect(redact(`/accounts/confirm%2Demail/${KEY}/`)).toBe('/accounts/confirm-email/[redacted]/');
    expect(redact(`http://acme.example/accounts/confirm-email/${KEY}/`)).toBe('http://acme.example/accounts/confirm-email/[redacted]/');
  });

  it('hides the key under whatever prefix the pages are mounted at (URL_PREFIX), or used to be', () => {
    expect(redact(`/auth/accounts/confirm-email/${KEY}/`)).toBe('/auth/accounts/confirm-email/[redacted]/');
    expect(redact(`/id/v2/accounts/password/reset/key/${KEY}/`)).toBe('/id/v2/accounts/password/reset/key/[redacted]/');
    expect(redact(`http://acme.example/auth//accounts/confirm-email/${KEY}?x=1`)).toBe('http://acme.example/auth//accounts/confirm-email/[redacted]?x=[redacted]');
    expect(redact('/auth/accounts/login/')).toBe('/auth/accounts/login/');
  });

  it('leaves paths without a key alone', () => {
    for (const path of ['/accounts/confirm-email/', '/accounts/password/reset/', '/accounts/login/', '/_allauth/browser/v1/auth/session', '/users/ada/']) {
      expect(redact(path)).toBe(path);
    }
  });

  it('hides every query value but the few known to be harmless', () => {
    expect(redact('/accounts/oidc/corp/login/callback/?code=SplxlOBeZQQYbYS6WxSbIA&state=af0ifjsldkj')).toBe(
      '/accounts/oidc/corp/login/callback/?code=[redacted]&state=[redacted]',
    );
    expect(redact('/x/?token=abc&key=def&SAMLResponse=PHNhbWw%2B&RelayState=r1&Signature=s')).toBe(
      '/x/?token=[redacted]&key=[redacted]&SAMLResponse=[redacted]&RelayState=[redacted]&Signature=[redacted]',
    );
    expect(redact('/admin/users/user/?q=ada%40example.com&o=-date_joined&is_staff=1')).toBe('/admin/users/user/?q=[redacted]&o=-date_joined&is_staff=1');
    expect(redact('/accounts/login/?next=%2Fusers%2Fada%2F')).toBe('/accounts/login/?next=%2Fusers%2Fada%2F');
    expect(redact('/accounts/google/login/callback/?error=access_denied&state=s')).toBe('/accounts/google/login/callback/?error=access_denied&state=[redacted]');
  });

  it('hides a bare value, a `next` that is itself a keyed link, and a fragment', () => {
    expect(redact(`/x/?${KEY}`)).toBe('/x/?[redacted]');
    expect(redact(`/accounts/login/?next=%2Faccounts%2Fconfirm-email%2F${KEY}%2F`)).toBe('/accounts/login/?next=[redacted]');
    expect(redact(`/spa/#key=${KEY}`)).toBe('/spa/#[redacted]');
    expect(redact('/x/?a=1;b=2&')).toBe('/x/?a=[redacted];b=[redacted]&');
  });

  it("hides the keys of the front end's routes when this server serves them", () => {
    const prefixes = keyedPrefixesOf({
      account_confirm_email: 'https://acme.example/app/verify/{key}',
      account_reset_password_from_key: 'https://acme.example/app/reset?key={key}',
      account_signup: 'https://acme.example/app/signup',
    });
    expect(prefixes).toEqual(['/app/verify/']);
    const withFrontEnd = createUrlRedactor(prefixes);
    expect(withFrontEnd(`/app/verify/${KEY}`)).toBe('/app/verify/[redacted]');
    expect(withFrontEnd(`/app/reset?key=${KEY}`)).toBe('/app/reset?key=[redacted]');
    expect(keyedPrefixesOf({ account_confirm_email: 'https://app.acme.example/{key}' })).toEqual([]);
  });
});

describe('redacting the URLs in a message', () => {
  it("hides the key in Fastify's 'Route ... not found' line and leaves other text alone", () => {
    expect(redactUrlsInText(`Route GET:/accounts/password/reset/key/${KEY} not found`, redact)).toBe('Route GET:/accounts/password/reset/key/[redacted] not found');
    expect(redactUrlsInText('incoming request', redact)).toBe('incoming request');
    expect(redactUrlsInText('at handler (/srv/app/node_modules/x.js:12:5)', redact)).toBe('at handler (/srv/app/node_modules/x.js:12:5)');
  });
});
