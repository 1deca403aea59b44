import { judgeIds, judgeUnique, type KindConflicts } from '../django-import/conflicts.js';
import type { RowOutcome } from '../django-import/ports.js';

/**
 * A batch of imported rows settled against everything Latchkey holds, given at once: what the
 * import's writer does rule by rule, reading for each only the stored rows that may collide. Each
 * rule's `heldBy` ignores the stored rows it does not bind, so the answer is the same.
 */
export function settleAgainst<R, S>(kind: KindConflicts<R, S, unknown>, rows: R[], stored: S[]): RowOutcome[] {
  let verdict = judgeIds(kind, rows, stored);
  for (const rule of kind.unique) verdict = judgeUnique(kind, rule, rows, verdict, stored);
  return verdict.outcomes;
}
