/**
 * How the import settles a batch of rows against what Latchkey holds: which are already there,
 * which collide with another row (by id, or by a value no two rows may share), and which are
 * written. The rules of each kind are in account-conflicts.ts and mfa-social-conflicts.ts; this
 * file applies them. Nothing here reads or writes: the stored rows are given, read through the
 * port by conflict-checked-writer.ts, so every rule can be tested with rows held in memory.
 */
import type { RowOutcome } from './ports.js';

/** A row's id in its table: a number, or a string for rows keyed by several columns (a permission). */
export type RowId = number | string;

/**
 * One value no two rows may share (a user's login, an address another user verified, a
 * provider's uid). `R` is the imported row, `S` what Latchkey holds (ports.ts), `T` the table.
 */
export interface UniqueValue<R, S, T> {
  /** The row's value, or undefined when the rule does not bind it (an unverified address binds nothing). */
  of(row: R): string | undefined;
  /** The stored value of the same rule, or undefined when the stored row binds none. */
  heldBy(stored: S): string | undefined;
  /** The stored rows that may hold the values of `rows`: one read for the whole batch. */
  read(table: T, rows: readonly R[]): Promise<S[]>;
  reason(holder: RowId): string;
}

/** The conflict rules of one kind of row. */
export interface KindConflicts<R, S, T> {
  idOf(row: R): RowId;
  storedIdOf(stored: S): RowId;
  /** What must match for a stored row under the same id to be this row (a second run finds it "present"). */
  identity(row: R): string;
  storedIdentity(stored: S): string;
  /** The stored rows under the ids of `rows`. */
  readById(table: T, rows: readonly R[]): Promise<S[]>;
  takenReason(id: RowId): string;
  /** Why a second row with an id already met in this batch is not written (the sources' primary keys make it rare). */
  repeatedReason?: string;
  /** Checked in order: a row one rule skips is not offered to the next. */
  unique: readonly UniqueValue<R, S, T>[];
}

/** Where a batch stands: an outcome per row, and the rows (by index) not yet decided. */
export interface BatchVerdict {
  outcomes: RowOutcome[];
  undecided: number[];
}

/**
 * The first look at a batch: a row whose id holds the same row is present, one whose id holds
 * another row is skipped, and so is the second row of the batch with an id already met. The rest
 * are undecided until the unique values have been checked.
 */
export function judgeIds<R, S>(kind: KindConflicts<R, S, unknown>, rows: readonly R[], storedUnderIds: readonly S[]): BatchVerdict {
  const identities = new Map(storedUnderIds.map((stored) => [kind.storedIdOf(stored), kind.storedIdentity(stored)]));
  const outcomes: RowOutcome[] = rows.map(() => 'inserted');
  const undecided: number[] = [];
  const met = new Set<RowId>();
  rows.forEach((row, index) => {
    const id = kind.idOf(row);
    const there = identities.get(id);
    if (met.has(id)) outcomes[index] = { skipped: kind.repeatedReason ?? 'the source holds it twice' };
    else if (there === undefined) undecided.push(index);
    else outcomes[index] = there === kind.identity(row) ? 'present' : { skipped: kind.takenReason(id) };
    met.add(id);
  });
  return { outcomes, undecided };
}

/**
 * One unique value checked for the undecided rows: a row whose value another row holds (stored,
 * or earlier in this batch) is skipped with the reason naming the holder. A stored row holding the
 * value under the row's own id is no conflict. Checking here, rather than letting a unique index
 * refuse the INSERT, keeps the transaction usable on PostgreSQL and names the reason.
 */
export function judgeUnique<R, S>(kind: KindConflicts<R, S, unknown>, rule: UniqueValue<R, S, unknown>, rows: readonly R[], verdict: BatchVerdict, holders: readonly S[]): BatchVerdict {
  const held = new Map<string, RowId>();
  for (const stored of holders) {
    const value = rule.heldBy(stored);
    if (value !== undefined) held.set(value, kind.storedIdOf(stored));
  }
  const outcomes = [...verdict.outcomes];
  const undecided: number[] = [];
  for (const index of verdict.undecided) {
    const row = rows[index]!;
    const value = rule.of(row);
    const holder = value === undefined ? undefined : held.get(value);
    if (holder !== undefined && holder !== kind.idOf(row)) {
      outcomes[index] = { skipped: rule.reason(holder) };
      continue;
    }
    if (value !== undefined) held.set(value, kind.idOf(row));
    undecided.push(index);
  }
  return { outcomes, undecided };
}

export const undecidedRows = <R>(rows: readonly R[], verdict: BatchVerdict): R[] => verdict.undecided.map((index) => rows[index]!);

/** Whether the rule binds a value of any undecided row: when none does, there is nothing to read. */
export const bindsAny = <R>(rule: UniqueValue<R, unknown, unknown>, rows: readonly R[]): boolean => rows.some((row) => rule.of(row) !== undefined);

/** The distinct ids, or the distinct defined values, a read asks for. */
export const distinct = <V>(values: readonly V[]): V[] => [...new Set(values)];
export const definedValues = (values: readonly (string | undefined)[]): string[] => distinct(values.filter((value): value is string => value !== undefined));
