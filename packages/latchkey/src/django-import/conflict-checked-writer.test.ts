/**
 * What a batch costs: the writer reads once per rule that binds a row of the batch, never per
 * row, and inserts the rows let through in one call. A table held in memory counts the calls.
 */
import { describe, expect, it } from 'vitest';
import type { EmailAddress } from '../account/model.js';
import { emailAddressConflicts } from './account-conflicts.js';
import { importBatch } from './conflict-checked-writer.js';
import type { EmailAddressImportTable } from './ports.js';

function addressesInMemory(stored: EmailAddress[]): EmailAddressImportTable & { calls: string[]; inserted: EmailAddress[][] } {
  const calls: string[] = [];
  const inserted: EmailAddress[][] = [];
  const answer = (call: string, rows: EmailAddress[]) => {
    calls.push(call);
    return Promise.resolve(rows);
  };
  return {
    calls,
    inserted,
    withIds: (ids) => answer('withIds', stored.filter((row) => ids.includes(row.id))),
    ofUsers: (userIds) => answer('ofUsers', stored.filter((row) => userIds.includes(row.userId))),
    verifiedWithEmails: (emails) => answer('verifiedWithEmails', stored.filter((row) => row.verified && emails.includes(row.email))),
    insert: (rows) => {
      inserted.push([...rows]);
      return Promise.resolve();
    },
  };
}

const address = (id: number, userId: number, fields: Partial<EmailAddress> = {}): EmailAddress => ({ id, userId, email: `user${userId}@example.com`, verified: false, primary: false, ...fields });

describe('importBatch', () => {
  it('reads once per rule for a whole batch and inserts the rows let through in one call', async () => {
    const table = addressesInMemory([address(1, 1, { email: 'shared@example.com', verified: true, primary: true })]);
    const rows = [address(10, 2, { primary: true, verified: true }), address(11, 3, { primary: true, verified: true }), address(12, 4, { email: 'shared@example.com', verified: true })];
    const outcomes = await importBatch(emailAddressConflicts, table, rows);
    expect(outcomes).toEqual(['inserted', 'inserted', { skipped: 'another user has verified this address (email address id 1)' }]);
    expect(table.calls).toEqual(['withIds', 'ofUsers', 'ofUsers', 'verifiedWithEmails']);
    expect(table.inserted).toEqual([rows.slice(0, 2)]);
  });

  it('reads nothing for a rule no row of the batch binds (no primary, no verified address here)', async () => {
    const table = addressesInMemory([]);
    await importBatch(emailAddressConflicts, table, [address(10, 2), address(11, 3)]);
    expect(table.calls).toEqual(['withIds', 'ofUsers']);
  });

  it('inserts nothing, and reads no further, when every row is there already', async () => {
    const stored = [address(10, 2)];
    const table = addressesInMemory(stored);
    expect(await importBatch(emailAddressConflicts, table, stored)).toEqual(['present']);
    expect(table.calls).toEqual(['withIds']);
    expect(table.inserted).toEqual([]);
  });
});
