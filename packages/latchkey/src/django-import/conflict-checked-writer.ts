/**
 * Writes each batch the import makes through Latchkey's tables (the port, ports.ts), settled by
 * the conflict rules first: the rows a batch may collide with are read in one query per rule, the
 * rules decide (conflicts.ts), and the rows they let through are inserted in one go. So a batch of
 * a thousand rows costs a handful of statements, whatever it holds.
 */
import type { EmailAddress, User } from '../account/model.js';
import type { UsernameType } from '../config/settings.js';
import type { SocialAccount, SocialApp, SocialToken } from '../socialaccount/model.js';
import type { ApiToken } from '../tokens/model.js';
import { adminPermissionConflicts, apiTokenConflicts, emailAddressConflicts, userConflicts } from './account-conflicts.js';
import { bindsAny, judgeIds, judgeUnique, undecidedRows, type KindConflicts } from './conflicts.js';
import { authenticatorConflicts, socialAccountConflicts, socialAppConflicts, socialTokenConflicts } from './mfa-social-conflicts.js';
import type { AccountImportTables, ImportedAuthenticator, ImportedPermission, ImportInserts, RowOutcome } from './ports.js';

/**
 * Writes Latchkey's rows, made from a Django project's, in batches, and answers one outcome per
 * row, in order: a row whose id holds another row, or whose unique value (an email, a username, a
 * provider uid, ...) another row holds, is skipped with the reason; no row is changed once written.
 */
export interface AccountImportWriter {
  users(rows: readonly User[]): Promise<RowOutcome[]>;
  emailAddresses(rows: readonly EmailAddress[]): Promise<RowOutcome[]>;
  apiTokens(rows: readonly ApiToken[]): Promise<RowOutcome[]>;
  authenticators(rows: readonly ImportedAuthenticator[]): Promise<RowOutcome[]>;
  socialApps(rows: readonly SocialApp[]): Promise<RowOutcome[]>;
  socialAccounts(rows: readonly SocialAccount[]): Promise<RowOutcome[]>;
  socialTokens(rows: readonly SocialToken[]): Promise<RowOutcome[]>;
  adminPermissions(rows: readonly ImportedPermission[]): Promise<RowOutcome[]>;
}

/**
 * One batch: the stored rows under its ids, then, for each unique value in turn, the stored rows
 * holding the values of the rows still undecided (none is read when no such row binds the value).
 */
export async function importBatch<R, S, T extends ImportInserts<R>>(kind: KindConflicts<R, S, T>, table: T, rows: readonly R[]): Promise<RowOutcome[]> {
  if (rows.length === 0) return [];
  let verdict = judgeIds(kind, rows, await kind.readById(table, rows));
  for (const rule of kind.unique) {
    const undecided = undecidedRows(rows, verdict);
    if (!bindsAny(rule, undecided)) continue;
    verdict = judgeUnique(kind, rule, rows, verdict, await rule.read(table, undecided));
  }
  const accepted = undecidedRows(rows, verdict);
  if (accepted.length > 0) await table.insert(accepted);
  return verdict.outcomes;
}

export function conflictCheckedWriter(tables: AccountImportTables, usernameType: UsernameType): AccountImportWriter {
  const users = userConflicts(usernameType);
  return {
    users: (rows) => importBatch(users, tables.users, rows),
    emailAddresses: (rows) => importBatch(emailAddressConflicts, tables.emailAddresses, rows),
    apiTokens: (rows) => importBatch(apiTokenConflicts, tables.apiTokens, rows),
    authenticators: (rows) => importBatch(authenticatorConflicts, tables.authenticators, rows),
    socialApps: (rows) => importBatch(socialAppConflicts, tables.socialApps, rows),
    socialAccounts: (rows) => importBatch(socialAccountConflicts, tables.socialAccounts, rows),
    socialTokens: (rows) => importBatch(socialTokenConflicts, tables.socialTokens, rows),
    adminPermissions: (rows) => importBatch(adminPermissionConflicts, tables.adminPermissions, rows),
  };
}
