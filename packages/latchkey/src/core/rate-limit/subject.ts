/**
 * How the subject of an attempt (an IP address, a key such as a login, a user id) becomes part of
 * a bucket name. Spellings of one subject must land in one bucket, or an attacker gets a fresh
 * allowance per spelling; and the name is hashed, so no email address or username is stored in
 * clear in the counters table or in Redis.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { sha256Hex } from '../crypto.js';

/**
 * Case, width and compatibility variants of a login ("Alice", " alice ", "ＡＬＩＣＥ") are one key:
 * NFKC, then full case folding approximated as upper- then lower-casing ('ß' folds to 'ss'), then
 * NFKC again (case mapping can produce sequences that compose), then trimming, as the account
 * lookup does (core/identifiers.ts normalizeUsernameKey).
 */
export function normalizeRateLimitKey(key: string): string {
  return key.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').trim();
}

/** The eight 16-bit groups of a valid IPv6 address (zone id dropped), as numbers. */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  // A trailing dotted IPv4 part ("::ffff:1.2.3.4") stands for the last two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The network an IP address is counted under. An IPv6 client is usually given a whole /64 (and
 * can pick any address in it at will, as privacy extensions do), so counting single addresses
 * would hand it 2^64 allowances: its /64 prefix is the unit. An IPv4-mapped IPv6 address, which a
 * dual-stack socket reports for an IPv4 client, is the IPv4 address it maps.
 */
export function ipNetwork(ip: string): string {
  const address = ip.trim();
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) {
    // Not an address (an adapter's placeholder): still counted, under its own spelling.
    return address.toLowerCase();
  }
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The hashed form a subject takes in a bucket name. */
export function hashSubject(value: string): string {
  return sha256Hex(value);
}
