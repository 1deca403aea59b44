import type {} from '@fastify/cookie';
import { fastifyCookie } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config/settings.js';
import type { Clock } from '../../core/clock.js';
import type { ActiveSession, SessionService } from '../../sessions/session-service.js';
import type { Store } from '../../store.js';
import type { User } from '../../account/model.js';
import { csrfOptionsFrom, rotateCsrfSecret } from './csrf.js';
import { isRecentAuthentication } from '../../account/flows/reauthenticate.js';
import type { AuthenticationRecord, SamlSignIn } from './authentication-records.js';

/** Session key holding when the user last proved who they are. */
const AUTHENTICATED_AT = '_authenticated_at';
/** Session key holding whether the person chose "remember me" at login. */
const REMEMBER = '_remember';
/** Session key holding how the user proved who they are in this session (headless `methods`). */
const AUTHENTICATIONS = '_authentications';
/** Session key holding the SAML sign-in the login came through, which the IdP's single logout must name (docs/saml.md). */
const SAML_SIGN_IN = '_saml_sign_in';

/**
 * How a session id travels between the server and a client: in a cookie for browsers, in the
 * X-Session-Token header for apps (the headless API's `app` client).
 */
export interface SessionTransport {
  /** The session id the request carries, if any. */
  read(request: FastifyRequest): string | undefined;
  /** Hands a new session id to the client; `remember` asks for a long-lived cookie. */
  issue(request: FastifyRequest, reply: FastifyReply, id: string, remember: boolean): void;
  /** Tells the client that its session has ended. */
  clear(request: FastifyRequest, reply: FastifyReply): void;
  /** After a login or any change of privilege (browsers: a new CSRF secret). */
  privilegeChanged(request: FastifyRequest, reply: FastifyReply): void;
  /** The id this request handed out, where the transport returns it in the answer (an app's token). */
  issuedToken?(request: FastifyRequest): string | undefined;
}

/** The session cookie, read from the Cookie header itself so that it works on the project's routes too. */
export function cookieTransport(settings: Settings): SessionTransport {
  return {
    read(request) {
      const parsed = request.cookies ?? fastifyCookie.parse(request.headers.cookie ?? '');
      return parsed[settings.SESSION_COOKIE_NAME];
    },
    issue(_request, reply, id, remember) {
      // HttpOnly: scripts never see the id. SameSite=Lax: not sent on cross-site POSTs. In
      // production the name carries the __Host- prefix, which browsers only accept with Secure,
      // Path=/ and no Domain, so a sibling subdomain cannot plant or overwrite it.
      reply.setCookie(settings.SESSION_COOKIE_NAME, id, {
        path: '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: settings.SESSION_COOKIE_SECURE,
        ...(remember ? { maxAge: settings.SESSION_COOKIE_AGE } : {}),
      });
    },
    clear(_request, reply) {
      reply.clearCookie(settings.SESSION_COOKIE_NAME, { path: '/', secure: settings.SESSION_COOKIE_SECURE, sameSite: 'lax', httpOnly: true });
    },
    privilegeChanged(request, reply) {
      rotateCsrfSecret(request, reply, csrfOptionsFrom(settings));
    },
  };
}

/**
 * Binds server-side sessions to HTTP requests through a transport (the cookie, by default). It
 * works for Latchkey's own routes and for the project's routes alike (a project asks
 * `latchkey.currentUser(request)`).
 */
export class RequestSessions {
  private readonly loaded = new WeakMap<FastifyRequest, Promise<ActiveSession | undefined>>();
  private readonly transport: SessionTransport;

  constructor(
    private readonly sessions: SessionService,
    private readonly store: Store,
    private readonly settings: Settings,
    private readonly clock: Clock,
    transport?: SessionTransport,
  ) {
    this.transport = transport ?? cookieTransport(settings);
  }

  /** The same sessions, carried by another transport (the headless API's app client). */
  withTransport(transport: SessionTransport): RequestSessions {
    return new RequestSessions(this.sessions, this.store, this.settings, this.clock, transport);
  }

  /** The request's live session, looked up once per request. */
  session(request: FastifyRequest): Promise<ActiveSession | undefined> {
    let session = this.loaded.get(request);
    if (!session) {
      session = this.sessions.load(this.transport.read(request));
      this.loaded.set(request, session);
    }
    return session;
  }

  /**
   * The request's session, creating an anonymous one (with a browser-session cookie) when there
   * is none: for state kept before login, such as a pending login or a flash message.
   */
  async ensureSession(request: FastifyRequest, reply: FastifyReply): Promise<ActiveSession> {
    const existing = await this.session(request);
    if (existing) return existing;
    const session = await this.sessions.create({ userId: null, ipAddress: request.ip, userAgent: request.headers['user-agent'] ?? '' });
    this.loaded.set(request, Promise.resolve(session));
    this.transport.issue(request, reply, session.id, false);
    return session;
  }

  /**
   * The logged-in user, or undefined. An account deactivated or deleted since login is
   * logged out at once: the user is read from the database on every request, never kept in the
   * session between requests.
   */
  async currentUser(request: FastifyRequest): Promise<User | undefined> {
    const session = await this.session(request);
    if (session?.userId == null) return undefined;
    // The first read uses the user loaded with the session (the same query, at the start of this
    // request); any later one reads anew, so that it sees what the request itself has changed.
    const loaded = session.userAsLoaded;
    session.userAsLoaded = undefined;
    const user = loaded?.id === session.userId ? loaded : await this.store.users.findById(session.userId);
    return user?.isActive ? user : undefined;
  }

  /**
   * Ends the pre-login session and starts a new one for the user: a new session id and a new CSRF
   * secret, so that an id or token planted or seen before the login is worthless after it.
   * `remember` chooses a long-lived cookie; otherwise the cookie ends with the browser session.
   * `authentications` records how the user proved who they are (the headless API lists them);
   * `samlSignIn`, the SAML sign-in the login came through, if it did.
   */
  async login(
    request: FastifyRequest,
    reply: FastifyReply,
    user: User,
    options: { remember: boolean; authentications?: AuthenticationRecord[]; samlSignIn?: SamlSignIn },
  ): Promise<ActiveSession> {
    const previous = await this.session(request);
    // An anonymous session's state (a cart, a pending step) carries into the login; another
    // user's never does, or it would leak to whoever logs in next on a shared browser. The SAML
    // sign-in an earlier login came through never does either: it is each login's own to record.
    const { [SAML_SIGN_IN]: _earlier, ...carried } = previous && (previous.userId === null || previous.userId === user.id) ? previous.data : {};
    const data = {
      ...carried,
      [AUTHENTICATED_AT]: this.clock.now().toISOString(),
      [REMEMBER]: options.remember,
      [AUTHENTICATIONS]: options.authentications ?? [],
      ...(options.samlSignIn === undefined ? {} : { [SAML_SIGN_IN]: options.samlSignIn }),
    };
    if (previous) await this.sessions.end(previous);
    const session = await this.sessions.create({ userId: user.id, data, ipAddress: request.ip, userAgent: request.headers['user-agent'] ?? '' });
    this.loaded.set(request, Promise.resolve(session));
    this.transport.issue(request, reply, session.id, options.remember);
    this.transport.privilegeChanged(request, reply);
    return session;
  }

  /**
   * A new session id (and CSRF secret) for the same user and state: after any change of
   * privilege (a password change, MFA turned on, staff rights granted), so that an id observed
   * before the change is worthless after it.
   */
  async rotate(request: FastifyRequest, reply: FastifyReply): Promise<ActiveSession | undefined> {
    const previous = await this.session(request);
    if (!previous) return undefined;
    const session = await this.sessions.rotate(previous);
    this.loaded.set(request, Promise.resolve(session));
    // The cookie keeps the lifetime the person chose at login.
    this.transport.issue(request, reply, session.id, session.data[REMEMBER] === true);
    this.transport.privilegeChanged(request, reply);
    return session;
  }

  /** Records that the user just proved who they are again, and how (a password or a code). */
  async markReauthenticated(request: FastifyRequest, how: AuthenticationRecord): Promise<void> {
    const session = await this.session(request);
    if (!session) return;
    const authentications = [...(await this.authentications(request)), how].slice(-20);
    await this.sessions.saveData(session, { ...session.data, [AUTHENTICATED_AT]: this.clock.now().toISOString(), [AUTHENTICATIONS]: authentications });
  }

  /** The SAML sign-in this session's user logged in through; undefined when nobody is signed in, or not through a SAML IdP. */
  async samlSignIn(request: FastifyRequest): Promise<SamlSignIn | undefined> {
    const session = await this.session(request);
    return session?.userId == null ? undefined : (session.data[SAML_SIGN_IN] as SamlSignIn | undefined);
  }

  /** How the user proved who they are in this session, oldest first. */
  async authentications(request: FastifyRequest): Promise<AuthenticationRecord[]> {
    const recorded = (await this.session(request))?.data[AUTHENTICATIONS];
    return Array.isArray(recorded) ? (recorded as AuthenticationRecord[]) : [];
  }

  /** When the user last logged in or reauthenticated in this session; undefined when never. */
  async lastAuthenticatedAt(request: FastifyRequest): Promise<Date | undefined> {
    const at = (await this.session(request))?.data[AUTHENTICATED_AT];
    return typeof at === 'string' ? new Date(at) : undefined;
  }

  /** Whether the user logged in or reauthenticated within the last five minutes (flows/reauthenticate.ts). */
  async isRecentlyAuthenticated(request: FastifyRequest): Promise<boolean> {
    return isRecentAuthentication({ clock: this.clock }, await this.lastAuthenticatedAt(request));
  }

  /**
   * Ends the request's session on the server and in the client, without a word to the audit
   * trail: Latchkey's doors sign out through kit/sign-out.ts, whose flow records user_logged_out.
   */
  async logout(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const session = await this.session(request);
    if (session) await this.sessions.end(session);
    this.forget(request, reply);
  }

  /** The client forgets its session (the cookie is cleared; an app's token is dead), once it has ended on the server. */
  forget(request: FastifyRequest, reply: FastifyReply): void {
    this.loaded.set(request, Promise.resolve(undefined));
    this.transport.clear(request, reply);
  }

  /** The session token this request handed to an app (a new or rotated session), for the answer's meta. */
  issuedToken(request: FastifyRequest): string | undefined {
    return this.transport.issuedToken?.(request);
  }
}
