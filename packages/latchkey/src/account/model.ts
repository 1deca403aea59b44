/**
 * The account model: users, their email addresses, and the audit trail of what happened to them.
 * Entities only; the repositories that store them are in ports.ts.
 */
import type { ProjectUserFields } from '../core/user-fields.js';

/** A user: Latchkey's fields, and the project's own (ProjectUserFields, docs/user-fields.md) beside them. */
export interface User extends ProjectUserFields {
  id: number;
  /** The username as the person typed it (after NFKC); null when the project logs in by email. */
  username: string | null;
  /** The user's primary email address, normalized; '' when none was given (username projects only). */
  email: string;
  name: string;
  /** A Django-format encoded password hash, or an unusable marker starting with '!'. */
  password: string;
  isActive: boolean;
  isStaff: boolean;
  isSuperuser: boolean;
  dateJoined: Date;
  lastLogin: Date | null;
  /** The language the person chose (a code of LANGUAGES, e.g. `de`), or '' when they chose none: pages and mails follow it. */
  language: string;
}

/** A user to create; the project's fields it does not give start empty. */
export interface NewUser extends Partial<ProjectUserFields> {
  /** Required when the project logs in by username; must be absent otherwise. */
  username?: string;
  email: string;
  name?: string;
  password: string;
  isActive?: boolean;
  isStaff?: boolean;
  isSuperuser?: boolean;
  dateJoined: Date;
}

/** What an update changes: Latchkey's fields named here, and any of the project's own. */
export type UserChanges = Partial<Pick<User, 'name' | 'email' | 'isActive' | 'isStaff' | 'isSuperuser' | 'password' | 'lastLogin' | 'language'>> & Partial<ProjectUserFields>;

/** One of a user's email addresses (allauth's EmailAddress): verified or not, and at most one primary. */
export interface EmailAddress {
  id: number;
  userId: number;
  email: string;
  verified: boolean;
  primary: boolean;
}

export interface NewEmailAddress {
  userId: number;
  email: string;
  verified: boolean;
  primary: boolean;
}

/** A row of the audit trail: one account event, with the client it came from. */
export interface AuditRecord {
  id: number;
  /** The event's name, e.g. user_logged_in (account/events.ts). */
  event: string;
  /** Who the event is recorded against: the user, or for an admin change the staff member who made it. */
  userId: number | null;
  /** For an admin change, the user it was made to (the `target` of its data); null otherwise. */
  targetUserId: number | null;
  createdAt: Date;
  ipAddress: string;
  userAgent: string;
  /** Details of the event; never a secret. */
  data: Record<string, unknown>;
}

export type NewAuditRecord = Omit<AuditRecord, 'id' | 'targetUserId'> & { targetUserId?: number | null };
