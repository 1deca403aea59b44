import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../config/load.js';
import type { Settings } from '../../config/settings.js';
import { strictTransportSecurity, strictTransportSecurityValue } from './strict-transport-security.js';

const PROJECT = { USERNAME_TYPE: 'username', SITE_NAME: 'Acme', DOMAIN_NAME: 'acme.example' } as const;
const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  LATCHKEY_SECRET_KEY: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP',
  DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/app',
  EMAIL_URL: 'smtp://127.0.0.1:25',
  LATCHKEY_ADMIN_URL: 'staff-a8d2/',
};

function settingsFor(env: Record<string, string>): Settings {
  return loadSettings(PROJECT, { env, cwd: process.cwd() });
}

/** An app as the template builds it: trustProxy from TRUST_PROXY_HOPS, the hook on the whole app. */
async function appWith(settings: Settings): Promise<FastifyInstance> {
  const app = Fastify({ trustProxy: (_address: string, hop: number) => hop < settings.TRUST_PROXY_HOPS });
  app.addHook('onRequest', strictTransportSecurity(settings));
  app.get('/', () => ({ ok: true }));
  app.get('/fails', () => {
    throw new Error('boom');
  });
  await app.ready();
  return app;
}

const hsts = async (app: FastifyInstance, url: string, headers: Record<string, string> = {}) =>
  (await app.inject({ method: 'GET', url, headers: { host: 'acme.example', ...headers } })).headers['strict-transport-security'];

describe('Strict-Transport-Security', () => {
  it('is a year in production, and off in local and test mode', () => {
    expect(settingsFor(PRODUCTION_ENV)).toMatchObject({ SECURE_HSTS_SECONDS: 31_536_000, SECURE_HSTS_INCLUDE_SUBDOMAINS: false, SECURE_HSTS_PRELOAD: false });
    expect(settingsFor({ NODE_ENV: 'development' }).SECURE_HSTS_SECONDS).toBe(0);
    expect(settingsFor({ NODE_ENV: 'test' }).SECURE_HSTS_SECONDS).toBe(0);
  });

  it('in production, is sent on HTTPS requests behind a trusted proxy, on every answer, and not on plain HTTP', async () => {
    const app = await appWith(settingsFor({ ...PRODUCTION_ENV, LATCHKEY_TRUST_PROXY_HOPS: '1' }));
    expect(await hsts(app, '/', { 'x-forwarded-proto': 'https' })).toBe('max-age=31536000');
    expect(await hsts(app, '/nowhere/', { 'x-forwarded-proto': 'https' })).toBe('max-age=31536000');
    expect(await hsts(app, '/fails', { 'x-forwarded-proto': 'https' })).toBe('max-age=31536000');
    // Over plain HTTP browsers ignore it (RFC 6797 section 8.1), so it is not sent.
    expect(await hsts(app, '/', { 'x-forwarded-proto': 'http' })).toBeUndefined();
    expect(await hsts(app, '/')).toBeUndefined();
  });

  it('believes X-Forwarded-Proto only from a trusted proxy', async () => {
    const app = await appWith(settingsFor({ ...PRODUCTION_ENV, LATCHKEY_TRUST_PROXY_HOPS: '0' }));
    expect(await hsts(app, '/', { 'x-forwarded-proto': 'https' })).toBeUndefined();
  });

  it('is never sent in local mode, even over HTTPS', async () => {
    const app = await appWith(settingsFor({ NODE_ENV: 'development', LATCHKEY_TRUST_PROXY_HOPS: '1' }));
    expect(await hsts(app, '/', { 'x-forwarded-proto': 'https', host: 'localhost' })).toBeUndefined();
  });

  it('adds includeSubDomains and preload when asked, and switches off with 0', () => {
    const all = settingsFor({ ...PRODUCTION_ENV, LATCHKEY_SECURE_HSTS_INCLUDE_SUBDOMAINS: 'true', LATCHKEY_SECURE_HSTS_PRELOAD: 'true' });
    expect(strictTransportSecurityValue(all)).toBe('max-age=31536000; includeSubDomains; preload');
    expect(strictTransportSecurityValue(settingsFor({ ...PRODUCTION_ENV, LATCHKEY_SECURE_HSTS_SECONDS: '600' }))).toBe('max-age=600');
    expect(strictTransportSecurityValue(settingsFor({ ...PRODUCTION_ENV, LATCHKEY_SECURE_HSTS_SECONDS: '0' }))).toBeUndefined();
  });

  it('refuses preload without includeSubDomains and a year, and a value that is not a number, naming the variable', () => {
    expect(() => settingsFor({ ...PRODUCTION_ENV, LATCHKEY_SECURE_HSTS_PRELOAD: 'true' })).toThrow(
      'LATCHKEY_SECURE_HSTS_PRELOAD=true needs LATCHKEY_SECURE_HSTS_INCLUDE_SUBDOMAINS=true and LATCHKEY_SECURE_HSTS_SECONDS of at least 31536000',
    );
    expect(() => settingsFor({ ...PRODUCTION_ENV, LATCHKEY_SECURE_HSTS_SECONDS: 'a year' })).toThrow('LATCHKEY_SECURE_HSTS_SECONDS="a year" is not allowed: use a whole number from 0 to 63072000.');
  });
});
