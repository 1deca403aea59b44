/**
 * Where a provider may be. In production, never on a loopback or private address: whoever may
 * configure an app (a settings file, a staff member with the social-app permission) could
 * otherwise make the server send requests to its own Redis or PostgreSQL, a cloud's metadata
 * service at 169.254.169.254, or any machine of the private network (SSRF). An operator lifts the
 * rule for the hosts SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists (a Keycloak on the private
 * network). Outside production it does not apply: tests and developers run providers on 127.0.0.1.
 *
 * A URL's text is checked where an app's settings arrive and where discovery names endpoints, so
 * that a mistake is told in one clear line; the addresses a host name resolves to are checked as
 * the connection is made (provider-fetch.ts), since a public-looking name may resolve to a private
 * address. docs/social.md ("Where a provider may be").
 */
import { BlockList, isIP } from 'node:net';
import type { Settings } from '../../config/settings.js';
import type { SettingProblem } from './app-settings.js';

/** What the settings say about where providers may be. */
export interface ProviderHostRule {
  /** True in production: loopback and private addresses are refused. */
  readonly privateRefused: boolean;
  /** The hosts the refusal spares, as comparableHost gives them. */
  readonly allowedHosts: ReadonlySet<string>;
}

/** The setting that lists the hosts spared, as messages name it. */
export const ALLOWLIST_SETTING = 'SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST';

/** Outside production: a provider may be anywhere. */
export const ANY_HOST: ProviderHostRule = { privateRefused: false, allowedHosts: new Set() };

export function providerHostRule(settings: Pick<Settings, 'ENVIRONMENT' | 'SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST'>): ProviderHostRule {
  if (settings.ENVIRONMENT !== 'production') return ANY_HOST;
  return { privateRefused: true, allowedHosts: new Set(settings.SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST.map(comparableHost)) };
}

/** A host as the rule compares it: lower-case, an IPv6 address without its brackets, no trailing dot. */
export function comparableHost(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/**
 * The addresses no provider may be at in production: IPv4's "this network", private (RFC 1918),
 * carrier-grade NAT, loopback, link-local (cloud metadata), IETF protocol, benchmarking, multicast
 * and reserved ranges; IPv6's unspecified, loopback, unique-local, link-local, site-local and
 * multicast ranges. An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is checked as its IPv4 address
 * (BlockList does so itself); NAT64 and 6to4 ones by the IPv4 address they carry.
 */
const PRIVATE_ADDRESSES = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE_ADDRESSES.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]] as const) {
  PRIVATE_ADDRESSES.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IPv4 or IPv6 address, brackets or not) is one no provider may be at in production. */
export function isPrivateAddress(address: string): boolean {
  // A zone (fe80::1%eth0) names an interface, not another address.
  const bare = comparableHost(address).replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return PRIVATE_ADDRESSES.check(bare, 'ipv4');
  if (family !== 6) return false;
  if (PRIVATE_ADDRESSES.check(bare, 'ipv6')) return true;
  const carried = carriedIPv4(ipv6Groups(bare));
  return carried !== undefined && PRIVATE_ADDRESSES.check(carried, 'ipv4');
}

/** An IPv6 address's eight 16-bit groups. */
function ipv6Groups(address: string): number[] {
  // The WHATWG URL parser writes an IPv6 address in one canonical form: hex groups, one "::" at most.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail = ''] = canonical.includes('::') ? canonical.split('::') : [canonical];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const zeros = Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => parseInt(group, 16));
}

/** The IPv4 address a NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address carries; undefined for any other. */
function carriedIPv4(groups: number[]): string | undefined {
  const ipv4 = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) return ipv4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return ipv4(groups[1]!, groups[2]!);
  return undefined;
}

/** How a refusal ends: how an operator lifts it. */
function unlessListed(host: string): string {
  return `which production refuses unless ${ALLOWLIST_SETTING} lists ${host}`;
}

/**
 * Why the rule refuses `url` from its text alone, or undefined: its host is a loopback or private
 * address, or a name that is always loopback (localhost and *.localhost, RFC 6761). Any other name
 * is checked when it is resolved (provider-fetch.ts).
 */
export function privateUrlProblem(url: URL, rule: ProviderHostRule): string | undefined {
  const host = comparableHost(url.hostname);
  if (!rule.privateRefused || rule.allowedHosts.has(host)) return undefined;
  const loopbackName = host === 'localhost' || host.endsWith('.localhost');
  return loopbackName || isPrivateAddress(host) ? `is on a loopback or private address, ${unlessListed(url.hostname)}` : undefined;
}

/** Why the rule refuses connecting to `address` for `hostname` (a URL's host), or undefined. */
export function privateAddressProblem(hostname: string, address: string, rule: ProviderHostRule): string | undefined {
  if (!rule.privateRefused || rule.allowedHosts.has(comparableHost(hostname)) || !isPrivateAddress(address)) return undefined;
  const what = comparableHost(hostname) === comparableHost(address) ? `${address} is a loopback or private address` : `${hostname} resolves to ${address}, a loopback or private address`;
  // The allow-list, as a URL, writes an IPv6 address in brackets.
  return `${what}, ${unlessListed(isIP(hostname) === 6 ? `[${hostname}]` : hostname)}`;
}

/** A URL of a provider an app's settings give, with the setting that gives it (`server_url`, `idp.metadata_url`). */
export interface SettingsEndpoint {
  setting: string;
  url: URL;
}

/** The first of an app's endpoints the rule refuses, as the problem to report about its settings; undefined when none is. */
export function privateEndpointProblem(endpoints: readonly SettingsEndpoint[], rule: ProviderHostRule): SettingProblem | undefined {
  for (const { setting, url } of endpoints) {
    const problem = privateUrlProblem(url, rule);
    if (problem !== undefined) return { key: setting.split('.')[0]!, reason: 'invalid', message: `${setting} ${JSON.stringify(url.href)} ${problem}` };
  }
  return undefined;
}
