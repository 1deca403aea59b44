import type { onResponseHookHandler } from 'fastify';
import type { TestLatchkey } from './latchkey.js';

/**
 * How long a slowed session write waits at most: long enough for work started beside the answer
 * to finish first, had it been started (it is waited for, so the time is only a bound).
 */
const SLOW_WRITE_BOUND_MS = 100;

export interface AnswerOrder {
  /** What happened, in order: `answered <METHOD> <path>` as each answer is sent, `mail to <address>` as each mail starts. */
  events: string[];
  /** An onResponse hook that records the answers; add it to the test's Fastify app. */
  recordAnswer: onResponseHookHandler;
}

/**
 * For tests of work a request leaves for after its answer (docs/architecture.md, "Work after the
 * answer"), such as the mail that only an existing account gets: records each answer as it is sent
 * and each mail as it starts, in one list. Session writes are made slow, as over a network to
 * PostgreSQL, so that a door still waits for something after its flow: each first waits until the
 * background work has finished, at most a moment. Work wrongly started beside the answer is done by
 * then, and its mail comes before the answer in the list; work held until the answer is not.
 */
export function observeAnswersAndMail(latchkey: TestLatchkey): AnswerOrder {
  const events: string[] = [];
  const { mailer } = latchkey;
  const send = mailer.send.bind(mailer);
  mailer.send = (message) => {
    events.push(`mail to ${message.to.join(', ')}`);
    return send(message);
  };
  const sessions = latchkey.deps.store.sessions;
  const slowly =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([latchkey.deps.background.idle(), new Promise((resolve) => (bound = setTimeout(resolve, SLOW_WRITE_BOUND_MS)))]);
      clearTimeout(bound);
      return write(...args);
    };
  sessions.create = slowly(sessions.create.bind(sessions));
  sessions.update = slowly(sessions.update.bind(sessions));
  return {
    events,
    recordAnswer: (request, _reply, done) => {
      events.push(`answered ${request.method} ${request.url}`);
      done();
    },
  };
}
