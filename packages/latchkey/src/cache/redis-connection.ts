/**
 * The one way Latchkey connects to Redis (REDIS_URL), shared by the rate-limit counters and the
 * one-time claims, so that both fail alike: at start-up, in one line, without the URL's password;
 * and while running, closed.
 *
 * While Redis is away every command fails at once (or, when the server hangs, after a short
 * timeout) with LatchkeyError('server_busy'), which every door answers with 503. Nothing falls
 * back to the database: counts kept there during an outage would start again from zero (an
 * attacker's eleventh guess would be their first), and a TOTP code claimed in Redis before the
 * outage could be claimed again in the database. Refusing is the only answer that never lets an
 * attempt through uncounted or a code be used twice. The client keeps reconnecting in the
 * background, so service resumes by itself as soon as Redis answers again.
 */
import { Redis } from 'ioredis';
import { LatchkeyError } from '../core/errors.js';
import { maskUrlCredentials } from '../core/redact.js';

export const DEFAULT_REDIS_CONNECT_TIMEOUT_MS = 5000;
/** How long a command may wait for an answer from a server that accepted it (one that hangs). */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 2000;
/** The longest wait between two attempts to reconnect, so service resumes soon after Redis does. */
const MAX_RECONNECT_DELAY_MS = 1000;

/** What a person is told while Redis is away: nothing about the server, only that it will pass. */
export const REDIS_UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable. Please try again in a moment.';

/** Where the outage and the recovery are reported: one line each (a Fastify or pino logger fits). */
export interface OutageLog {
  warn(message: string): void;
  info(message: string): void;
}

export interface RedisConnectionOptions {
  url: string;
  /** How long to wait for the server at start-up and on each reconnection; default 5000 ms. */
  connectTimeoutMs?: number;
  /** How long a command may wait for its answer; default 2000 ms. */
  commandTimeoutMs?: number;
  /** Default: the console. */
  log?: OutageLog;
}

export interface RedisConnection {
  /**
   * Runs commands on the connection. Any failure (no connection, no answer in time, an error
   * reply) becomes LatchkeyError('server_busy'): the caller refuses the request it was guarding.
   */
  run<T>(commands: (client: Redis) => Promise<T>): Promise<T>;
  /** One more user of this connection, who will close() it once (the connection ends with its last user). */
  retain(): RedisConnection;
  /** Lets go of the connection; the last user's close ends it, politely if the server still answers. */
  close(): Promise<void>;
}

function describe(error: unknown, url: string): string {
  const reason = error instanceof Error ? error.message : 'unknown error';
  return reason.replaceAll(url, maskUrlCredentials(url));
}

function openClient(options: RedisConnectionOptions): Redis {
  return new Redis(options.url, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_REDIS_CONNECT_TIMEOUT_MS,
    // A command issued while the connection is down fails at once instead of waiting in a queue
    // for a server that may not come back: a login must be answered (503), not left hanging.
    enableOfflineQueue: false,
    // A command in flight when the connection drops fails with it; it is not sent again later,
    // when the request it served has long been answered.
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // A server that accepts commands but never answers (stopped, partitioned) costs a request
    // this long at most.
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    // Never gives up: a number, not null, every time, so the connection comes back with the server.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
  });
}

/** Opens the connection and checks that the server answers, so a bad REDIS_URL stops start-up. */
export async function connectRedis(options: RedisConnectionOptions): Promise<RedisConnection> {
  const { url } = options;
  const masked = maskUrlCredentials(url);
  const log = options.log ?? console;
  const client = openClient(options);
  // Unhandled, ioredis prints every reconnection failure; the outage is logged once below instead.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new LatchkeyError('database_unavailable', `Cannot reach Redis at REDIS_URL='${masked}': ${describe(error, url)}.`, { cause: error });
  }

  // One line when Redis goes away and one when it is back, however many requests are refused
  // meanwhile: a line per refused request would flood the log just when it is read.
  let available = true;
  let closing = false;
  const wentAway = (reason: string): void => {
    if (!available || closing) return;
    available = false;
    log.warn(`Redis at REDIS_URL='${masked}' is unavailable (${reason}): requests that need rate limits or one-time codes are refused with 503 until it answers again.`);
  };
  const cameBack = (): void => {
    if (available || closing) return;
    available = true;
    log.info(`Redis at REDIS_URL='${masked}' answers again: rate limits and one-time codes are back in service.`);
  };
  client.on('close', () => wentAway('connection lost'));
  client.on('ready', cameBack);

  let users = 1;
  const connection: RedisConnection = {
    async run(commands) {
      const result = await Promise.resolve(client)
        .then(commands)
        .catch((error: unknown) => {
          wentAway(describe(error, url));
          throw new LatchkeyError('server_busy', REDIS_UNAVAILABLE_MESSAGE, { cause: error });
        });
      // A server that hung without closing the connection says it is back by answering.
      cameBack();
      return result;
    },
    retain() {
      users += 1;
      return connection;
    },
    async close() {
      users -= 1;
      if (users !== 0) return;
      closing = true;
      await client.quit().then(
        () => undefined,
        () => client.disconnect(),
      );
    },
  };
  return connection;
}
