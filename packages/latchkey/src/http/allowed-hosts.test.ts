import { describe, expect, it } from 'vitest';
import { isAllowedHost } from './allowed-hosts.js';

describe('allowed hosts', () => {
  const allowed = ['example.com', '.example.org', '[::1]', '127.0.0.1'];

  it('accepts listed hosts with or without a port, and subdomains of a dotted pattern', () => {
    for (const host of ['example.com', 'EXAMPLE.com:8443', 'example.com.', 'example.org', 'www.example.org', '[::1]:8000', '127.0.0.1']) {
      expect(isAllowedHost(host, allowed), host).toBe(true);
    }
  });

  it('refuses other hosts, look-alikes and malformed headers', () => {
    for (const host of [undefined, '', 'evil.com', 'example.com.evil.com', 'wwwexample.org', 'example.com@evil.com', 'example.com:80:80', 'exa mple.com', 'example.com/x']) {
      expect(isAllowedHost(host, allowed), String(host)).toBe(false);
    }
  });

  it('accepts anything with *', () => {
    expect(isAllowedHost('anything.test', ['*'])).toBe(true);
  });
});
