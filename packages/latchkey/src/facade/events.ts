import { ACCOUNT_EVENTS, type AccountEventHandler, type AccountEventName } from '../account/events.js';
import type { AuditRecord, User } from '../account/model.js';
import type { ClientInfo } from '../core/client.js';
import { LatchkeyError } from '../core/errors.js';
import type { LatchkeyDeps } from '../deps.js';

/** Account events as they happen (allauth's signals): docs/accounts.md lists each and what it carries. */
export interface LatchkeyEvents {
  /**
   * Calls `handler` after each event of that name (or of every name, with '*') has committed.
   * A handler that throws is logged and undoes nothing. Returns a function that unsubscribes.
   */
  subscribe(name: AccountEventName | '*', handler: AccountEventHandler): () => void;
}

/** The audit trail (`latchkey_audit_log`): every account event, and the project's own records. */
export interface LatchkeyAudit {
  /**
   * Writes a record of the project's own (an order placed, a role given) beside Latchkey's. The
   * name must not be one of Latchkey's events, so that nothing can pass for a login or a password
   * change that did not happen. `data` is stored as given: never put a secret in it.
   */
  record(name: string, user: Pick<User, 'id'> | null, client: ClientInfo, data?: Record<string, unknown>): Promise<AuditRecord>;
  /** The user's records, newest first: their own doings and, for staff, the changes they made. */
  listForUser(user: Pick<User, 'id'>, limit?: number): Promise<AuditRecord[]>;
}

const LATCHKEY_EVENT_NAMES: ReadonlySet<string> = new Set(ACCOUNT_EVENTS);
/** Short lowercase names, as Latchkey's own are: they are searched and shown in the admin. */
const RECORD_NAME = /^[a-z][a-z0-9_.:-]{0,63}$/;

export function eventsOf(deps: LatchkeyDeps): LatchkeyEvents {
  return { subscribe: (name, handler) => deps.events.subscribe(name, handler) };
}

export function auditOf(deps: LatchkeyDeps): LatchkeyAudit {
  return {
    async record(name, user, client, data = {}) {
      if (!RECORD_NAME.test(name)) {
        throw new LatchkeyError('invalid_input', 'A record name is 1 to 64 lowercase letters, digits and _ . : -, starting with a letter.', { param: 'name' });
      }
      if (LATCHKEY_EVENT_NAMES.has(name)) {
        throw new LatchkeyError('invalid_input', '"{name}" is one of Latchkey\'s own events, which only Latchkey records.', { param: 'name', params: { name } });
      }
      return deps.store.auditLog.record({
        event: name,
        userId: user?.id ?? null,
        targetUserId: null,
        createdAt: deps.clock.now(),
        ipAddress: client.ip,
        userAgent: client.userAgent,
        data,
      });
    },
    listForUser: (user, limit) => deps.store.auditLog.listForUser(user.id, limit),
  };
}
