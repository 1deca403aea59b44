import { describe, expect, it } from 'vitest';
import { ipNetwork, normalizeRateLimitKey } from './subject.js';

describe('normalizeRateLimitKey', () => {
  it('folds case, width, compatibility forms and surrounding whitespace into one key', () => {
    const variants = ['alice@example.com', 'Alice@Example.COM', '  alice@example.com\t', 'ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ', '\u3000ALICE@example.com'];
    expect(new Set(variants.map(normalizeRateLimitKey))).toEqual(new Set(['alice@example.com']));
  });

  it('folds the Kelvin sign and sharp s like the account lookup does', () => {
    expect(normalizeRateLimitKey('\u212Aate')).toBe('kate');
    expect(normalizeRateLimitKey('STRASSE')).toBe(normalizeRateLimitKey('straße'));
  });
});

describe('ipNetwork', () => {
  it('keeps an IPv4 address whole', () => {
    expect(ipNetwork('203.0.113.7')).toBe('203.0.113.7');
    expect(ipNetwork(' 203.0.113.7 ')).toBe('203.0.113.7');
  });

  it('counts an IPv6 address under its /64, whatever its spelling', () => {
    const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0DB8:0001:0002:0:0:0:9', '2001:db8:1:2::5%eth0', '2001:db8:1:2::1.2.3.4'];
    expect(new Set(sameNetwork.map(ipNetwork))).toEqual(new Set(['2001:db8:1:2::/64']));
    expect(ipNetwork('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(ipNetwork('::1')).toBe('0:0:0:0::/64');
    expect(ipNetwork('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(ipNetwork('2001:db8::')).toBe('2001:db8:0:0::/64');
  });

  it('reads an IPv4-mapped IPv6 address (a dual-stack socket) as the IPv4 address', () => {
    expect(ipNetwork('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(ipNetwork('::FFFF:cb00:7107')).toBe('203.0.113.7');
  });

  it('still counts something that is not an address, under its own spelling', () => {
    expect(ipNetwork('Unknown')).toBe('unknown');
  });
});
