/**
 * Work a flow leaves in the background (deps.background.run), given the deps answeringWith makes
 * for its door, starts only after the door's answer has been sent: what the doors of login by
 * code and password reset rely on to keep an existing account's mail out of the time of their
 * answer (docs/architecture.md, "Work after the answer").
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { answeringWith } from './after-answer.js';

/** At most this long, a route waits for its own background work to be done before it answers. */
const WAIT_BOUND_MS = 100;

describe('background work after the answer', () => {
  let latchkey: TestLatchkey;
  let app: FastifyInstance;
  let events: string[];
  afterEach(async () => {
    await app.close();
    await latchkey.destroy();
  });

  /**
   * Routes that start background work and then still wait for something before they answer, as a
   * door writing the session does; the wait ends as soon as the work is done, had it been started.
   */
  async function start(): Promise<void> {
    latchkey = await createTestLatchkey();
    events = [];
    const { background } = latchkey.deps;
    const work = () => {
      events.push('work');
      return Promise.resolve();
    };
    const waitForTheWork = async () => {
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([background.idle(), new Promise((resolve) => (bound = setTimeout(resolve, WAIT_BOUND_MS)))]);
      clearTimeout(bound);
    };
    app = Fastify();
    app.addHook('onResponse', (request, _reply, done) => {
      events.push(`answered ${request.url}`);
      done();
    });
    await app.register(latchkey.plugin, {
      routes(scope) {
        scope.get('/work-then-answer', async (_request, reply) => {
          void answeringWith(latchkey.deps, reply).background.run(work);
          await waitForTheWork();
          return 'answer';
        });
        scope.get('/work-then-fail', async (_request, reply) => {
          void answeringWith(latchkey.deps, reply).background.run(work);
          await waitForTheWork();
          throw new Error('the route failed after starting its work');
        });
      },
    });
  }

  it('starts the work once the answer has been sent, though the route waited after starting it', async () => {
    await start();
    expect((await app.inject({ url: '/work-then-answer' })).statusCode).toBe(200);
    await latchkey.deps.background.idle();
    expect(events).toEqual(['answered /work-then-answer', 'work']);
  });

  it('does the same over a real connection', async () => {
    await start();
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    expect((await fetch(`${address}/work-then-answer`)).status).toBe(200);
    await latchkey.deps.background.idle();
    expect(events).toEqual(['answered /work-then-answer', 'work']);
  });

  it('still does the work when the route fails after starting it', async () => {
    await start();
    expect((await app.inject({ url: '/work-then-fail' })).statusCode).toBe(500);
    await latchkey.deps.background.idle();
    expect(events).toEqual(['answered /work-then-fail', 'work']);
  });
});
