import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { allowedHostsGuard, isAllowedHost } from './allowed-hosts.js';

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

describe('the allowed-hosts guard', () => {
  it('checks the forwarded host as well as the Host header behind a trusted proxy', async () => {
    const app = Fastify({ trustProxy: true });
    app.addHook('onRequest', allowedHostsGuard(['example.com']));
    app.get('/', () => 'ok');
    const status = async (headers: Record<string, string>) => (await app.inject({ url: '/', headers })).statusCode;
    expect(await status({ host: 'example.com' })).toBe(200);
    expect(await status({ host: 'example.com', 'x-forwarded-host': 'example.com' })).toBe(200);
    expect(await status({ host: 'example.com', 'x-forwarded-host': 'evil.example' })).toBe(400);
    expect(await status({ host: 'evil.example' })).toBe(400);
    await app.close();
  });
});

describe("the allowed-hosts guard's log line", () => {
  it('names the header the refused host came in, and does not offer to list what is not a host name', async () => {
    const lines: { level: number; msg: string }[] = [];
    const app = Fastify({ trustProxy: true, logger: { level: 'warn', stream: { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) } } });
    app.addHook('onRequest', allowedHostsGuard(['example.com']));
    app.get('/', () => 'ok');
    await app.inject({ url: '/', headers: { host: 'example.com', 'x-forwarded-host': 'Evil.Example:8443' } });
    await app.inject({ url: '/', headers: { host: 'example.com@evil.example' } });
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'Invalid X-Forwarded-Host header "Evil.Example:8443": refused with 400; to serve this host, add "evil.example" to ALLOWED_HOSTS (LATCHKEY_ALLOWED_HOSTS).'],
      [40, 'Invalid Host header "example.com@evil.example": refused with 400; it is not a host name that ALLOWED_HOSTS can list.'],
    ]);
    await app.close();
  });
});
