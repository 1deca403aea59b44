import { BackgroundTasks } from '../core/background.js';
import type { Clock } from '../core/clock.js';
import type { User } from '../account/model.js';
import { randomToken, sha256Hex } from '../core/crypto.js';
import type { ListedSession, SessionRepository, SessionSearch } from './ports.js';
import type { StoredSession } from './model.js';
import { openSessionData, sealSessionData } from './sealed-data.js';

/**
 * Server-side sessions. The id handed to the browser (or app) is 256 random bits; the database
 * keeps only its SHA-256, so a dump of the sessions table yields no id that can be replayed.
 * A plain hash suffices because the id has full entropy: there is nothing to brute-force.
 *
 * A session ends at the first of two limits: the absolute expiry fixed at creation, and the idle
 * timeout counted from the last request that touched it.
 */
export interface SessionPolicy {
  /** Seconds from creation until the session ends, however active it is. */
  absoluteLifetime: number;
  /** Seconds without a request after which the session ends. */
  idleTimeout: number;
}

export interface ActiveSession extends Omit<StoredSession, 'sealedData'> {
  /** The raw id, known only to this request and the cookie or token that carried it. */
  id: string;
  /**
   * What the session keeps, opened from its sealed column on first read (most requests never
   * read it: a session's user is a column of its own). saveData writes it.
   */
  data: Record<string, unknown>;
  /**
   * The session's user as read with the session, in the same query, when it was loaded from a
   * request's id (absent for one created or rotated since). RequestSessions hands it out once,
   * as the request's first read of its user, and reads the user anew after that.
   */
  userAsLoaded?: User | undefined;
}

export interface NewSessionInput {
  userId: number | null;
  data?: Record<string, unknown>;
  ipAddress?: string;
  userAgent?: string;
  /** A rotated session keeps its predecessor's absolute limit: a new id is not a new lifetime. */
  expiresAt?: Date;
}

/** How stale lastSeenAt may grow before a request writes it again: not one write per request. */
const TOUCH_INTERVAL_MS = 60_000;
/** Ids are 32 random bytes in base64url: 43 characters. Anything else is not worth a query. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export class SessionService {
  /** "Last seen" writes under way, by session, which reads of lastSeenAt in this process wait for. */
  private readonly touches = new Map<string, Promise<void>>();

  constructor(
    private readonly repository: SessionRepository,
    private readonly clock: Clock,
    private readonly policy: SessionPolicy,
    /** LATCHKEY_SECRET_KEY, under which (with each session's id) the sessions' data is sealed. */
    private readonly secretKey: string,
    private readonly background: BackgroundTasks = new BackgroundTasks(),
  ) {}

  async create(input: NewSessionInput): Promise<ActiveSession> {
    const now = this.clock.now();
    const id = randomToken(32);
    const data = input.data ?? {};
    const session: StoredSession = {
      idHash: sha256Hex(id),
      userId: input.userId,
      sealedData: sealSessionData(this.secretKey, id, data),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: input.expiresAt ?? new Date(now.getTime() + this.policy.absoluteLifetime * 1000),
      ipAddress: (input.ipAddress ?? '').slice(0, 64),
      userAgent: (input.userAgent ?? '').slice(0, 512),
    };
    await this.repository.create(session);
    const { sealedData: _sealed, ...rest } = session;
    return { ...rest, id, data };
  }

  /** The stored session as this request holds it: its data opened only if someone reads it. */
  private activate(stored: StoredSession, id: string, userAsLoaded: User | undefined): ActiveSession {
    const { sealedData, ...rest } = stored;
    let data: Record<string, unknown> | undefined;
    const session = { ...rest, id, userAsLoaded } as ActiveSession;
    Object.defineProperty(session, 'data', {
      enumerable: true,
      get: () => (data ??= openSessionData(this.secretKey, id, sealedData)),
      set: (value: Record<string, unknown>) => {
        data = value;
      },
    });
    return session;
  }

  /**
   * The live session for an id, with its user, or undefined when it is unknown, malformed or
   * expired. One query reads both.
   */
  async load(id: string | undefined): Promise<ActiveSession | undefined> {
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const idHash = sha256Hex(id);
    // The session's own stamp, when a request a moment ago is still writing it, is waited for.
    await this.touches.get(idHash);
    const found = await this.repository.findWithUser(idHash);
    if (!found) return undefined;
    const { session, user } = found;
    const now = this.clock.now();
    if (this.isExpired(session, now)) {
      await this.repository.delete(idHash);
      return undefined;
    }
    if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) {
      this.touch(idHash, now);
      session.lastSeenAt = now;
    }
    return this.activate(session, id, user);
  }

  /**
   * Writes "last seen" after the answer, not before it: the request needs nothing from the write.
   * A write that fails leaves the stamp as it was, and a later request tries again; the session
   * only ends sooner if none succeeds for the whole idle timeout.
   */
  private touch(idHash: string, now: Date): void {
    const write = this.background.run(() => this.repository.update(idHash, { lastSeenAt: now })).then(
      () => undefined,
      () => undefined,
    );
    this.touches.set(idHash, write);
    void write.then(() => {
      if (this.touches.get(idHash) === write) this.touches.delete(idHash);
    });
  }

  /** Waits for the "last seen" writes under way, so that what this process lists includes them. */
  private async touchesWritten(): Promise<void> {
    await Promise.all(this.touches.values());
  }

  /**
   * Issues a new id for the session's state and kills the old id: on login and on any change of
   * privilege, so that an id planted or observed before the change is worthless after it. The
   * session keeps its absolute expiry: rotating (on every password change, say) must not let a
   * session outlive SESSION_COOKIE_AGE. A login is not a rotation: it starts a new session.
   */
  async rotate(session: ActiveSession, changes: { userId?: number | null; data?: Record<string, unknown> } = {}): Promise<ActiveSession> {
    await this.repository.delete(session.idHash);
    return this.create({
      userId: changes.userId === undefined ? session.userId : changes.userId,
      data: changes.data ?? session.data,
      ipAddress: session.ipAddress,
      userAgent: session.userAgent,
      expiresAt: session.expiresAt,
    });
  }

  async saveData(session: ActiveSession, data: Record<string, unknown>): Promise<void> {
    await this.repository.update(session.idHash, { sealedData: sealSessionData(this.secretKey, session.id, data) });
    session.data = data;
  }

  async end(session: Pick<StoredSession, 'idHash'>): Promise<void> {
    await this.repository.delete(session.idHash);
  }

  /** Ends every session of the user but the one given (after a password change, say). */
  async endOthers(userId: number, keep: Pick<StoredSession, 'idHash'> | undefined): Promise<number> {
    return this.repository.deleteForUser(userId, keep ? { exceptIdHash: keep.idHash } : {});
  }

  async endAll(userId: number): Promise<number> {
    return this.repository.deleteForUser(userId);
  }

  /** The user's live sessions, newest activity first, for the "sessions" page and API. */
  async listForUser(userId: number): Promise<StoredSession[]> {
    await this.touchesWritten();
    const now = this.clock.now();
    const sessions = await this.repository.listForUser(userId);
    return sessions.filter((session) => !this.isExpired(session, now)).sort((a, b) => b.lastSeenAt.getTime() - a.lastSeenAt.getTime());
  }

  /**
   * A page of live signed-in sessions for the admin, most recently seen first: those past either
   * limit are over, even before `clearsessions` removes them, so they are not listed.
   */
  async search(query: Omit<SessionSearch, 'now' | 'idleSince'>): Promise<ListedSession[]> {
    await this.touchesWritten();
    const now = this.clock.now();
    return this.repository.search({ ...query, now, idleSince: new Date(now.getTime() - this.policy.idleTimeout * 1000) });
  }

  /** Removes every session past either limit (the `clearsessions` command runs this). */
  async deleteExpired(): Promise<number> {
    await this.touchesWritten();
    const now = this.clock.now();
    return this.repository.deleteExpired(now, new Date(now.getTime() - this.policy.idleTimeout * 1000));
  }

  private isExpired(session: StoredSession, now: Date): boolean {
    return (
      session.expiresAt.getTime() <= now.getTime() ||
      now.getTime() - session.lastSeenAt.getTime() >= this.policy.idleTimeout * 1000
    );
  }
}
