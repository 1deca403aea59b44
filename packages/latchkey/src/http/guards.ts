import type { FastifyReply, FastifyRequest } from 'fastify';
import type { User } from '../account/model.js';
import { adminGrantsOf } from '../admin/access.js';
import type { AdminAction, AdminModel } from '../admin/model.js';
import { authenticateApiRequest } from './api/authentication.js';
import type { HttpContext } from './kit/context.js';
import { redirect, renderPage } from './kit/html-page.js';
import { requestUser, setRequestUser } from './kit/request-user.js';

/**
 * Route guards for the project's own routes (Django's login_required, staff_member_required,
 * permission_required; DRF's IsAuthenticated and IsAdminUser), as Fastify preHandlers:
 *
 *   scope.get('/reports/', { preHandler: latchkey.guards.staff }, handler)
 *
 * A guard that refuses answers the request itself and the handler never runs. A page guard sends
 * a stranger to the login page, which brings them back (`next`); an API guard answers 401 or 403
 * in Django REST framework's `{"detail": ...}` shape and reads a token as well as the session.
 * Either one leaves the user it let through in `request.user` (http/kit/request-user.ts). docs/extending.md shows each.
 */
export type RouteGuard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** The route guards for pages (`latchkey.guards`) or for JSON routes (`latchkey.apiGuards`), to put in a route's preHandler. */
export interface RouteGuards {
  /** A signed-in, active user. */
  readonly signedIn: RouteGuard;
  /** A signed-in, active staff member (is_staff). */
  readonly staff: RouteGuard;
  /** A signed-in user the admin grants `action` on `model` (a superuser has every one). */
  permission(model: AdminModel, action: AdminAction): RouteGuard;
  /**
   * A user who signed in or reauthenticated within the last 5 minutes (allauth's
   * reauthentication): for pages that change something sensitive. A page sends the person to
   * reauthenticate and back; an API answers 401, and the client reauthenticates through the
   * headless API.
   */
  readonly recentlyAuthenticated: RouteGuard;
}

const NOT_AUTHENTICATED = 'Authentication credentials were not provided.';
const NO_PERMISSION = 'You do not have permission to perform this action.';
const NOT_RECENT = 'Reauthentication is required.';

/** Where a page guard's refusals lead, with `next` to come back. */
function toPage(ctx: HttpContext, reply: FastifyReply, page: 'account_login' | 'account_reauthenticate', request: FastifyRequest): FastifyReply {
  return redirect(reply, ctx.deps.urls.urlFor(page, {}, { next: request.url }));
}

/** Answered to a signed-in user a page guard refuses: the site's 403.html (Django's 403 page), in the layout as that user sees it. */
function forbiddenPage(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  return renderPage(ctx, request, reply, '403.html', { status: 403 }, 403);
}

function apiRefusal(reply: FastifyReply, status: 401 | 403, detail: string): FastifyReply {
  // DRF's 401 names the scheme the client should use (TokenAuthentication's authenticate_header).
  if (status === 401) reply.header('www-authenticate', 'Token');
  return reply.code(status).header('cache-control', 'no-store').send({ detail });
}

type Refusal = 'forbidden' | 'not_recent';
type Check = (user: User, request: FastifyRequest) => Promise<boolean>;

/** How one kind of route (pages, an API) finds the user and says no. */
interface GuardDoor {
  /** The user, or undefined after answering the request (a stranger, a bad token). */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<User | undefined>;
  refuse(request: FastifyRequest, reply: FastifyReply, why: Refusal): FastifyReply | Promise<FastifyReply>;
}

function guardsThrough(door: GuardDoor, ctx: HttpContext): RouteGuards {
  const guard =
    (check?: Check, why: Refusal = 'forbidden'): RouteGuard =>
    async (request, reply) => {
      const user = await door.admit(request, reply);
      if (user === undefined || check === undefined || (await check(user, request))) return;
      await door.refuse(request, reply, why);
    };
  return {
    signedIn: guard(),
    staff: guard((user) => Promise.resolve(user.isStaff)),
    permission: (model, action) => guard(async (user) => (await adminGrantsOf(ctx.deps, user)).may(model, action)),
    recentlyAuthenticated: guard((_user, request) => ctx.sessions.isRecentlyAuthenticated(request), 'not_recent'),
  };
}

/** Guards for pages: the session's user; strangers to the login page, the rest to reauthentication or a 403. */
export function pageGuards(ctx: HttpContext): RouteGuards {
  return guardsThrough(
    {
      async admit(request, reply) {
        const user = await requestUser(ctx.sessions, request);
        if (user === undefined) await toPage(ctx, reply, 'account_login', request);
        return user;
      },
      refuse: (request, reply, why) => (why === 'not_recent' ? toPage(ctx, reply, 'account_reauthenticate', request) : forbiddenPage(ctx, request, reply)),
    },
    ctx,
  );
}

/**
 * Guards for an API: a token (Authorization: Token ...) or the session, as the API layer's views
 * authenticate (with the CSRF check a session needs on unsafe methods); refusals in DRF's shape.
 */
export function apiGuards(ctx: HttpContext): RouteGuards {
  return guardsThrough(
    {
      async admit(request, reply) {
        const authentication = await authenticateApiRequest(ctx, request, 'token_and_session');
        if (authentication.kind === 'refused') {
          await apiRefusal(reply, authentication.status, authentication.detail);
          return undefined;
        }
        if (authentication.kind === 'anonymous') {
          await apiRefusal(reply, 401, NOT_AUTHENTICATED);
          return undefined;
        }
        setRequestUser(request, authentication.user);
        return authentication.user;
      },
      refuse: (_request, reply, why) => (why === 'not_recent' ? apiRefusal(reply, 401, NOT_RECENT) : apiRefusal(reply, 403, NO_PERMISSION)),
    },
    ctx,
  );
}
