import { finished } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { LatchkeyDeps } from '../../deps.js';

/**
 * The deps for a flow whose background work (deps.background.run: the mail of a password reset or
 * of a sign-in code) must start only once this reply has been sent. Started any sooner, it would
 * run during whatever the door still awaits before answering (the session it writes) and make the
 * answer for an existing account the slower one (docs/architecture.md, "Work after the answer").
 * Every door that calls such a flow passes these deps; flows never see the reply.
 */
export function answeringWith<D extends Pick<LatchkeyDeps, 'background'>>(deps: D, reply: FastifyReply): D {
  return { ...deps, background: deps.background.afterAnswer(answerSent(reply)) };
}

/**
 * Settles once the answer has been handed to the connection, or the connection has gone without
 * it (the client left): the work then runs all the same, and is never held for ever.
 */
function answerSent(reply: FastifyReply): Promise<void> {
  return new Promise((resolve) => {
    finished(reply.raw, () => resolve());
  });
}
