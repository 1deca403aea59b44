/**
 * The fetch providers reach the network with in production: undici's, through a connection pool
 * that refuses, as each connection is made, a loopback or private address (private-hosts.ts) that
 * the host is, or that its name resolves to, unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists the
 * host. Checking the address the connection is made to, rather than the URL's text or an earlier
 * lookup, also holds against a name that resolves to a public address once and a private one the
 * next time (DNS rebinding). No redirect is followed by any caller (oauth2-requests.ts).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { privateAddressProblem, type ProviderHostRule } from './private-hosts.js';

/** How a host name is resolved: node:dns's lookup, or a test's. */
export type HostLookup = (hostname: string, options: LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

/** A connection refused by the rule; its message says which address and how to allow it. */
export class PrivateAddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrivateAddressError';
  }
}

/**
 * A fetch that holds every connection to `rule`. `lookup` replaces the system resolver (a test's,
 * to make a name resolve to a loopback address).
 */
export function privateAddressGuardedFetch(rule: ProviderHostRule, options: { lookup?: HostLookup } = {}): typeof fetch {
  const resolve: HostLookup = options.lookup ?? ((hostname, lookupOptions, callback) => dnsLookup(hostname, lookupOptions, callback));
  const connect = buildConnector({ lookup: guardedLookup(rule, resolve) });
  const pool = new Agent({
    connect(connectOptions, callback) {
      // A host that is an address is connected to without a lookup: it is checked here instead.
      const problem = isIP(connectOptions.hostname) === 0 ? undefined : privateAddressProblem(connectOptions.hostname, connectOptions.hostname, rule);
      if (problem !== undefined) {
        callback(new PrivateAddressError(problem), null);
        return;
      }
      connect(connectOptions, callback);
    },
  });
  // undici's fetch is the global one's twin (Node's own is built on undici), only its types differ.
  return (input, init) => undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: pool });
}

/**
 * The lookup a connection is made with: every address the name resolves to is checked (a name
 * with one public and one private address is refused), then given as the caller asked, one or all.
 */
function guardedLookup(rule: ProviderHostRule, resolve: HostLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, []);
        return;
      }
      for (const { address } of addresses) {
        const problem = privateAddressProblem(hostname, address, rule);
        if (problem !== undefined) {
          callback(new PrivateAddressError(problem), []);
          return;
        }
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, addresses[0]?.address ?? '', addresses[0]?.family);
    });
  };
}
