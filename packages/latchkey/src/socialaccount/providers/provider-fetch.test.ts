/**
 * The fetch providers use in production (provider-fetch.ts), against a server on 127.0.0.1: a
 * connection to a loopback or private address is refused whether the URL names the address or a
 * host name resolves to it (with the system's resolver, or one that answers one public and one
 * private address), and goes through for a host SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCauses } from './network-errors.js';
import { providerHostRule } from './private-hosts.js';
import { privateAddressGuardedFetch, type HostLookup } from './provider-fetch.js';

const production = (allowlist: string[] = []) => providerHostRule({ ENVIRONMENT: 'production', SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: allowlist });

/** Why the request failed, as the server's log would tell it (network-errors.ts). */
async function failure(request: Promise<Response>): Promise<string> {
  const error: unknown = await request.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(Error);
  return describeCauses(error);
}

describe('the fetch providers use in production', () => {
  let server: Server;
  let port: number;
  let requests = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      requests += 1;
      res.end('redis would answer here');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses an address in the URL, and a name the system resolves to loopback, before any byte is sent', async () => {
    const guarded = privateAddressGuardedFetch(production());
    expect(await failure(guarded(`http://127.0.0.1:${port}/`))).toContain('127.0.0.1 is a loopback or private address, which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists 127.0.0.1');
    expect(await failure(guarded(`http://localhost:${port}/`))).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback or private address/);
    expect(requests).toBe(0);
  });

  it('refuses a name with any private address among those it resolves to', async () => {
    const publicAndPrivate: HostLookup = (_hostname, _options, callback) => callback(null, [{ address: '93.184.215.14', family: 4 }, { address: '127.0.0.1', family: 4 }]);
    const guarded = privateAddressGuardedFetch(production(), { lookup: publicAndPrivate });
    expect(await failure(guarded(`https://idp.example:${port}/`))).toContain('idp.example resolves to 127.0.0.1');
    expect(requests).toBe(0);
  });

  it('connects to a host the allow-list names, by address or by a name that resolves to loopback', async () => {
    const toLoopback: HostLookup = (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const guarded = privateAddressGuardedFetch(production(['127.0.0.1', 'redis.internal']), { lookup: toLoopback });
    expect(await (await guarded(`http://127.0.0.1:${port}/`)).text()).toBe('redis would answer here');
    expect((await guarded(`http://redis.internal:${port}/`)).status).toBe(200);
    expect(requests).toBe(2);
  });
});
