import { describe, expect, it } from 'vitest';
import { AccountAdapter } from '../../account/adapter.js';
import { testSettings } from '../../testing/latchkey.js';
import { decodedValue, REDIRECT_TARGET_CASES } from '../../testing/redirect-targets.js';
import { allowedFrontendUrlOr, frontendTargetOr, isAllowedFrontendUrl, isSafeRedirect, redirectTargetOr, safeRedirectOr } from './safe-redirect.js';

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

describe('the target sent is the one a browser would request: characters outside ASCII percent-encoded', () => {
  /** What a Location header may carry without Node refusing it or a browser misreading it. */
  const HEADER_SAFE = /^[\x21-\x7e]*$/;

  it('encodes a safe next as UTF-8, in the path, the query and the fragment, and leaves an encoded one as it is', () => {
    const encoded: [string, string][] = [
      ['/\u3002x', '/%E3%80%82x'],
      ['/%E3%80%82x', '/%E3%80%82x'],
      ['/x?q=\u3002', '/x?q=%E3%80%82'],
      ['/caf\u00e9', '/caf%C3%A9'],
      ['/caf%E9', '/caf%E9'],
      ['/docs/#\u00fc', '/docs/#%C3%BC'],
      ['/a b?c d', '/a%20b?c%20d'],
      ['/\ud800', '/%EF%BF%BD'],
      ['/accounts/email/?tab=1', '/accounts/email/?tab=1'],
    ];
    for (const [next, target] of encoded) {
      expect(safeRedirectOr(next, '/fallback/'), next).toBe(target);
      expect(target, next).toMatch(HEADER_SAFE);
      // Once encoded, it stays as it is: a stored target may go through the rule again on its way out.
      expect(safeRedirectOr(target, '/fallback/'), next).toBe(target);
    }
  });

  it('falls back for control characters, and for a path that only serialises to another host', () => {
    const unsafe = ['/\r\nSet-Cookie: a=b', '/x\u0000', '/\t/evil.com', '/x\u007f', '/.//evil.com', '/..//evil.com', '/a/%2e%2e//evil.com', '/a/../..//evil.com', `/${'\u3002'.repeat(300)}`];
    for (const next of unsafe) expect(safeRedirectOr(next, '/fallback/'), JSON.stringify(next)).toBe('/fallback/');
  });

  it("encodes a URL at an allowed front end the same way, and refuses what the rule for next refuses", () => {
    const allowed = ['https://app.example.com'];
    expect(allowedFrontendUrlOr('https://app.example.com/cb/\u3002?q=\u00e9#\u00fc', allowed, undefined)).toBe('https://app.example.com/cb/%E3%80%82?q=%C3%A9#%C3%BC');
    expect(allowedFrontendUrlOr('/spa/\u3002', allowed, undefined)).toBe('/spa/%E3%80%82');
    for (const value of ['/.//evil.com', '/\r\n', 'https://app.example.com/\r\n', 'https://evil.example/\u3002']) expect(allowedFrontendUrlOr(value, allowed, undefined), JSON.stringify(value)).toBeUndefined();
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

describe("the adapter's isSafeUrl decides every target a request chose, in the form it will be sent", () => {
  /** Every kind of target: open-redirect forms, header injections, encodings, paths of this site. */
  const TARGETS: unknown[] = [
    '/', '/accounts/email/', '/shop?page=2&q=a%20b', '/caf\u00e9', '/%E3%80%82x', '/x#\u00fc', '/.//evil.com', '/a/../..//evil.com',
    '//evil.com', '/\\evil.com', '/%2F%2Fevil.com', '/%252F%252Fevil.com', '/\t/evil.com', '/\r\nSet-Cookie: a=b',
    'https://evil.com/', 'HTTPS://SHOP.EXAMPLE/x', 'https://shop.example/caf\u00e9', 'https://shop.example/\r\nSet-Cookie: a=b',
    'https://shop.example/%0d%0aSet-Cookie:%20a=b', 'https://shop.example\\@evil.com/', 'https://user:pw@shop.example/', ' https://shop.example/',
    'https:shop.example/', '//shop.example/', 'javascript:alert(1)//https://shop.example/', 'data:text/html,x', `https://shop.example/${'x'.repeat(3000)}`,
    ...REDIRECT_TARGET_CASES.map((target) => decodedValue(target.wire)),
    '', undefined, null, 42, ['/x'],
  ];
  /** What a Location header may carry without Node refusing it or a browser misreading it. */
  const HEADER_SAFE = /^[\x21-\x7e]*$/;

  /** Allows one more host, compared by origin as the doc comment says, and refuses one path of this site. */
  class ShopAdapter extends AccountAdapter {
    readonly asked: string[] = [];
    override isSafeUrl(url: string): boolean {
      this.asked.push(url);
      if (url.startsWith('/private/')) return false;
      return /^https?:/.test(url) ? new URL(url).origin === 'https://shop.example' : super.isSafeUrl(url);
    }
  }

  it('by default is exactly the strict rule: the same target or the same fallback for every value', () => {
    const adapter = new AccountAdapter(testSettings());
    for (const next of TARGETS) {
      expect(redirectTargetOr(adapter, next, '/fallback/'), JSON.stringify(next)).toBe(safeRedirectOr(next, '/fallback/'));
      const origins = ['https://app.example.com'];
      expect(frontendTargetOr(adapter, next, origins, undefined), JSON.stringify(next)).toBe(allowedFrontendUrlOr(next, origins, undefined));
    }
  });

  it('lets an override allow another host, which is sent serialised: no header can be injected, no raw byte sent', () => {
    const adapter = new ShopAdapter(testSettings());
    expect(redirectTargetOr(adapter, 'https://shop.example/orders/?id=7', '/fallback/')).toBe('https://shop.example/orders/?id=7');
    expect(redirectTargetOr(adapter, 'HTTPS://SHOP.EXAMPLE/caf\u00e9#\u00fc', '/fallback/')).toBe('https://shop.example/caf%C3%A9#%C3%BC');
    expect(redirectTargetOr(adapter, 'https://shop.example/%0d%0aSet-Cookie:%20a=b', '/fallback/')).toBe('https://shop.example/%0d%0aSet-Cookie:%20a=b');
    for (const refused of ['https://shop.example/\r\nSet-Cookie: a=b', 'https://shop.example/\t', 'https://shop.example.evil.com/', 'https://shop.example\\@evil.com/', 'https://user:pw@shop.example/', '//shop.example/', 'http://shop.example/']) {
      expect(redirectTargetOr(adapter, refused, '/fallback/'), JSON.stringify(refused)).toBe('/fallback/');
    }
    for (const next of TARGETS) {
      const target = redirectTargetOr(adapter, next, undefined);
      if (target !== undefined) expect(target, JSON.stringify(next)).toMatch(HEADER_SAFE);
    }
  });

  it('asks the adapter only about the two forms a redirect can send, each as it would be sent', () => {
    const adapter = new ShopAdapter(testSettings());
    for (const next of TARGETS) redirectTargetOr(adapter, next, undefined);
    for (const url of adapter.asked) {
      expect(url, url).toMatch(HEADER_SAFE);
      expect(url.startsWith('/') ? isSafeRedirect(url) : /^https?:\/\/[^/@\\]+\//.test(url), url).toBe(true);
    }
    expect(adapter.asked).toContain('https://shop.example/caf%C3%A9');
    expect(adapter.asked).not.toContain('//evil.com');
  });

  it('lets an override refuse a path of this site, as `next` and as a headless callback_url', () => {
    const adapter = new ShopAdapter(testSettings());
    expect(redirectTargetOr(adapter, '/private/x', '/fallback/')).toBe('/fallback/');
    expect(frontendTargetOr(adapter, '/private/x', [], undefined)).toBeUndefined();
    // A front end in CORS_ALLOWED_ORIGINS stays allowed: the project listed it itself.
    expect(frontendTargetOr(adapter, 'https://app.example.com/cb', ['https://app.example.com'], undefined)).toBe('https://app.example.com/cb');
    expect(frontendTargetOr(adapter, 'https://shop.example/cb', ['https://app.example.com'], undefined)).toBe('https://shop.example/cb');
    expect(frontendTargetOr(adapter, 'https://evil.example/cb', ['https://app.example.com'], undefined)).toBeUndefined();
  });
});
