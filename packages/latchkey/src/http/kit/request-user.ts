import type { FastifyRequest } from 'fastify';
import type { User } from '../../account/model.js';
import type { RequestSessions } from './request-sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The signed-in, active user of a request routed inside Latchkey's plugin, or undefined:
     * `const user = await request.user`. Read on first use, once per request.
     */
    readonly user: Promise<User | undefined>;
  }
}

/**
 * `request.user`: the request's signed-in, active user,
 * read once per request on first use and the same object on every read after. An API guard that
 * authenticated the request by its token puts that user here instead, so a route behind it reads
 * whoever the guard let through, however they proved it.
 */
const usersOfRequests = new WeakMap<FastifyRequest, Promise<User | undefined>>();

export function requestUser(sessions: RequestSessions, request: FastifyRequest): Promise<User | undefined> {
  let user = usersOfRequests.get(request);
  if (user === undefined) {
    user = sessions.currentUser(request);
    usersOfRequests.set(request, user);
  }
  return user;
}

/** What the request's user is from now on (a guard's token authentication). */
export function setRequestUser(request: FastifyRequest, user: User | undefined): void {
  usersOfRequests.set(request, Promise.resolve(user));
}
