/** A server-side session as stored (sessions/session-service.ts gives it its behaviour). */
export interface StoredSession {
  /** SHA-256 of the session id: the id itself is never stored, so a dump yields no live session. */
  idHash: string;
  userId: number | null;
  /**
   * What the session keeps between requests, sealed under a key made from the secret key and the
   * session's own id (sessions/sealed-data.ts): unreadable from the database alone.
   */
  sealedData: string;
  createdAt: Date;
  lastSeenAt: Date;
  /** The absolute expiry, fixed when the session is created. */
  expiresAt: Date;
  ipAddress: string;
  userAgent: string;
}

export type SessionChanges = Partial<Pick<StoredSession, 'userId' | 'sealedData' | 'lastSeenAt' | 'expiresAt'>>;
