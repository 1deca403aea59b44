import type { ClientInfo } from '../core/client.js';
import type { Clock } from '../core/clock.js';
import type { AuditLogRepository } from './ports.js';

/** allauth's signal names, so that a project's habits carry over. */
export const ACCOUNT_EVENTS = [
  'user_signed_up',
  'user_logged_in',
  'user_logged_out',
  'password_changed',
  'password_set',
  'password_reset',
  'email_confirmed',
  'email_confirmation_sent',
  'email_added',
  'email_removed',
  'email_changed',
  // allauth.mfa's: a second factor added, removed or reset (new recovery codes), used to sign in or
  // reauthenticate, and a wrong code given.
  'authenticator_added',
  'authenticator_removed',
  'authenticator_reset',
  'authenticator_used',
  'authentication_failed',
  // API tokens (tokens/), which neither allauth nor DRF signals: a user's token made or deleted,
  // and a token handed out to a login (POST /api/auth-token/), which is not a user_logged_in
  // because no session begins (tokens/flows/obtain-token.ts).
  'api_token_created',
  'api_token_deleted',
  'api_token_obtained',
  // allauth.socialaccount's: an account at a provider connected to the user, signed in with again
  // (its data refreshed), or disconnected.
  'social_account_added',
  'social_account_updated',
  'social_account_removed',
  // A provider application stored in the database added, changed (the names of the fields that
  // changed, 'secret' among them, never a value) or removed, through the admin or the management
  // command: recorded against the staff member (null for the command), with {provider, provider_id}.
  'social_app_added',
  'social_app_changed',
  'social_app_removed',
  // The admin area's (admin/): a superuser replaced a staff user's admin permissions. Django's admin
  // writes such a change to its own log (django_admin_log); here it joins the one audit trail,
  // recorded against the superuser who made it, with the user changed in its data.
  'admin_permissions_changed',
  // A user added, changed (which fields), given a password or none, signed out everywhere, or
  // deleted through the admin; or, from the admin's sessions, tokens and authenticators pages, one
  // of their sessions ended (change 'session_ended'), their API token made or deleted
  // ('api_token_created', 'api_token_deleted') or a second factor removed ('authenticator_removed',
  // with its type): recorded against the staff member, the user in its data. The user's own events
  // are recorded against them as well (api_token_created or _deleted; authenticator_removed, with
  // by: 'admin').
  //
  // An admin event names the user it changed as `target` in its data; the audit record keeps that
  // id in a column of its own (targetOf below), so the trail filtered by a user finds the changes
  // made to them as well as their own doings.
  'admin_user_changed',
] as const;
/** The name of an account event (`user_signed_up`, `user_logged_in`...): one of ACCOUNT_EVENTS. */
export type AccountEventName = (typeof ACCOUNT_EVENTS)[number];

/**
 * Something that happened to an account: who (`userId`, null before anyone is known), when, from
 * which client, and its details. The audit trail records each; `latchkey.events.subscribe` passes it on.
 */
export interface AccountEvent {
  name: AccountEventName;
  userId: number | null;
  at: Date;
  client: ClientInfo;
  /** Details (an address, a method); never a secret. */
  data: Record<string, unknown>;
}

/** A subscriber to account events (`latchkey.events.subscribe`); a failing one is logged, never the request's error. */
export type AccountEventHandler = (event: AccountEvent) => void | Promise<void>;

/** The largest user id (the ids' column is a 32-bit integer on PostgreSQL). */
const MAX_USER_ID = 2_147_483_647;

/** The user an admin change was made to: its data's `target`, when that is a user id. */
function targetOf(data: Record<string, unknown>): number | null {
  const { target } = data;
  return typeof target === 'number' && Number.isInteger(target) && target > 0 && target <= MAX_USER_ID ? target : null;
}

/**
 * Publishes account events to the project's subscribers and writes each as an audit record. A
 * subscriber that throws is logged and does not undo or fail the flow that emitted the event:
 * by then the change has happened.
 */
export class AccountEvents {
  private readonly handlers = new Map<AccountEventName | '*', AccountEventHandler[]>();

  constructor(
    private readonly auditLog: AuditLogRepository,
    private readonly clock: Clock,
    private readonly onHandlerError: (error: unknown, event: AccountEvent) => void = (error) => console.error(error),
  ) {}

  /** Subscribes to one event, or to every event with '*'. Returns a function that unsubscribes. */
  subscribe(name: AccountEventName | '*', handler: AccountEventHandler): () => void {
    const list = this.handlers.get(name) ?? [];
    list.push(handler);
    this.handlers.set(name, list);
    return () => {
      const current = this.handlers.get(name) ?? [];
      this.handlers.set(
        name,
        current.filter((h) => h !== handler),
      );
    };
  }

  /** Writes the audit record and then tells the subscribers: for an event that changes no rows of its own. */
  async emit(name: AccountEventName, userId: number | null, client: ClientInfo, data: Record<string, unknown> = {}): Promise<AccountEvent> {
    const event = await this.record(this.auditLog, name, userId, client, data);
    await this.publish([event]);
    return event;
  }

  /**
   * Writes the audit record through `auditLog`, which may be an open transaction's: then the record
   * commits or rolls back with the change it describes (account/changes.ts). Subscribers are not
   * told yet: publish() once the transaction has committed, so that none hears of a change that
   * was rolled back.
   */
  async record(auditLog: AuditLogRepository, name: AccountEventName, userId: number | null, client: ClientInfo, data: Record<string, unknown> = {}): Promise<AccountEvent> {
    const event: AccountEvent = { name, userId, at: this.clock.now(), client, data };
    await auditLog.record({ event: name, userId, targetUserId: targetOf(data), createdAt: event.at, ipAddress: client.ip, userAgent: client.userAgent, data });
    return event;
  }

  /** Tells the subscribers of events already recorded, in order. */
  async publish(events: readonly AccountEvent[]): Promise<void> {
    for (const event of events) {
      for (const handler of [...(this.handlers.get(event.name) ?? []), ...(this.handlers.get('*') ?? [])]) {
        try {
          await handler(event);
        } catch (error) {
          this.onHandlerError(error, event);
        }
      }
    }
  }
}
