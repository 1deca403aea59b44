/**
 * The one way Latchkey connects to Redis (REDIS_URL), shared by the rate-limit counters and the
 * one-time claims, so that both fail alike: at start-up, in one line, without the URL's password.
 */
import { Redis } from 'ioredis';
import { LatchkeyError } from '../core/errors.js';
import { maskUrlCredentials } from '../core/redact.js';

export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 5000;

/** Opens the connection and checks that the server answers, so a bad REDIS_URL stops start-up. */
export async function connectRedis(url: string, connectTimeoutMs: number = DEFAULT_REDIS_CONNECT_TIMEOUT_MS): Promise<Redis> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: connectTimeoutMs,
    // ioredis queues commands and retries without end while the server is away; a login would then
    // hang. A few retries, then the command fails and the flow reports the error instead.
    maxRetriesPerRequest: 2,
  });
  // Unhandled, ioredis prints every reconnection failure; the failing commands report it anyway.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    const reason = error instanceof Error ? error.message : 'unknown error';
    throw new LatchkeyError('database_unavailable', `Cannot reach Redis at REDIS_URL='${maskUrlCredentials(url)}': ${reason.replaceAll(url, maskUrlCredentials(url))}.`, {
      cause: error,
    });
  }
  return client;
}

/** Closes a connection opened by connectRedis, politely if the server still answers. */
export async function closeRedis(client: Redis): Promise<void> {
  await client.quit().then(
    () => undefined,
    () => client.disconnect(),
  );
}
