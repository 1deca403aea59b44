import Fastify from 'fastify';
import type { SettingValues } from '../config/settings.js';
import { createTestLatchkey, type TestLatchkeyOptions } from './latchkey.js';

/**
 * The headless API's OpenAPI document as a server with these settings serves it at
 * /_allauth/openapi.json: made from its routes' own schemas, so a test of the document reads what
 * clients read.
 */
export async function servedHeadlessDocument(settings: Partial<SettingValues> = {}, options: Omit<TestLatchkeyOptions, 'settings'> = {}): Promise<Record<string, unknown>> {
  const latchkey = await createTestLatchkey({ ...options, settings: { ...settings, HEADLESS_SERVE_SPECIFICATION: true } });
  const app = Fastify();
  try {
    await app.register(latchkey.plugin, { headless: true });
    const response = await app.inject({ url: `${latchkey.settings.URL_PREFIX}/_allauth/openapi.json`, headers: { host: 'testserver' } });
    if (response.statusCode !== 200) throw new Error(`/_allauth/openapi.json answered ${response.statusCode}`);
    return response.json();
  } finally {
    await app.close();
    await latchkey.destroy();
  }
}
