import { describe, expect, it } from 'vitest';
import { isAllowedFrontendUrl, isSafeRedirect } from './safe-redirect.js';

describe('next is followed only for same-site relative paths', () => {
  it('refuses every open-redirect form: other hosts and schemes, encoded or backslashed slashes, control characters', () => {
    const attacks = [
      '//evil.com',
      '///evil.com',
      '/\\evil.com',
      '\\\\evil.com',
      'http:///evil.com',
      'https://evil.com',
      'javascript:alert(1)',
      'https://app@evil.com',
      'https://app.evil.com',
      '%2F%2Fevil.com',
      '/%2F%2Fevil.com',
      '/%5cevil.com',
      '/%5C%5Cevil.com',
      '/%252F%252Fevil.com',
      '/%25252F%25252Fevil.com',
      '/%09/evil.com',
      '/%0a/evil.com',
      '/x/%2F%2Fevil.com?next=%2F',
      '/?next=/\\evil.com',
      '/?next=\t//evil.com',
      'jav\tascript:alert(1)',
      '/\t/evil.com',
      '/\n/evil.com',
      'evil.com',
      '',
      ' /x',
      'x'.repeat(3000),
    ];
    for (const next of [...attacks, null, undefined, ['/x'], 42]) expect(isSafeRedirect(next), JSON.stringify(next)).toBe(false);
  });

  it('accepts legitimate relative paths', () => {
    for (const next of ['/', '/accounts/email/', '/shop?page=2&q=a%20b', '/users/ada/#profile']) expect(isSafeRedirect(next), next).toBe(true);
  });

  it('accepts a same-site path whose query or fragment holds encoded characters, such as another next', () => {
    const accepted = [
      // Where the reauthentication page returns to before a connect: the connect button, with its own next.
      '/accounts/oidc/corp/login/?process=connect&next=%2Fdashboard%2F',
      '/accounts/login/?next=%2Faccounts%2Freauthenticate%2F%3Fnext%3D%252Fx%252F',
      '/search?q=a%2Fb%5Cc%25d%0A',
      '/docs/#%2F%2Fsection',
    ];
    for (const next of accepted) expect(isSafeRedirect(next), next).toBe(true);
  });

  it("leaves an open redirect inside a query to the page that reads it: decoded, it is refused there", () => {
    const outer = `/accounts/login/?next=${encodeURIComponent('//evil.com')}`;
    expect(isSafeRedirect(outer)).toBe(true);
    expect(isSafeRedirect(new URL(outer, 'http://testserver').searchParams.get('next'))).toBe(false);
  });
});

describe("a front end's URL is followed only on this site or at an allowed origin", () => {
  const allowed = ['http://testserver', 'https://app.example.com'];

  it('accepts same-site paths and URLs at the allowed origins', () => {
    for (const url of ['/app/callback', 'http://testserver/app/callback', 'https://app.example.com/account/provider/callback?x=1', 'HTTPS://APP.EXAMPLE.COM/cb']) {
      expect(isAllowedFrontendUrl(url, allowed), url).toBe(true);
    }
  });

  it('refuses other origins, look-alikes and every form a browser could read as another host', () => {
    const attacks = [
      'https://evil.example/callback',
      'https://app.example.com.evil.example/',
      'https://app.example.com@evil.example/',
      'https://user:pass@app.example.com/',
      'http://app.example.com/',
      'https://app.example.com:8443/',
      '//app.example.com/',
      'https:\\\\app.example.com/',
      'https://app.example.com\\@evil.example/',
      ' https://app.example.com/',
      'https://app.example.com/\t/x',
      'javascript:alert(1)//https://app.example.com/',
      'https:app.example.com/',
      'data:text/html,x',
      'x'.repeat(3000),
    ];
    for (const url of [...attacks, undefined, null, 42, ['/x']]) expect(isAllowedFrontendUrl(url, allowed), JSON.stringify(url)).toBe(false);
  });
});
