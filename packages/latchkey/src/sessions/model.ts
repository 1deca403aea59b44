/** A server-side session as stored (sessions/session-service.ts gives it its behaviour). */
export interface StoredSession {
  /** SHA-256 of the session id: the id itself is never stored, so a dump yields no live session. */
  idHash: string;
  userId: number | null;
  data: Record<string, unknown>;
  createdAt: Date;
  lastSeenAt: Date;
  /** The absolute expiry, fixed when the session is created. */
  expiresAt: Date;
  ipAddress: string;
  userAgent: string;
}

export type SessionChanges = Partial<Pick<StoredSession, 'userId' | 'data' | 'lastSeenAt' | 'expiresAt'>>;
