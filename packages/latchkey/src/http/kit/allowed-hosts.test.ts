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
