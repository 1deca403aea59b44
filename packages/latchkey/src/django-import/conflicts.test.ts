/**
 * How a batch is settled, on a made-up kind of row (a name tag: an id, an owner, a tag no two
 * owners share), so each step of the settling shows on its own. Each real kind's rules are tested
 * in account-conflicts.test.ts and mfa-social-conflicts.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { judgeIds, judgeUnique, type KindConflicts } from './conflicts.js';

interface Tag {
  id: number;
  owner: string;
  tag: string | null;
}

const tags: KindConflicts<Tag, Tag, unknown> = {
  idOf: (row) => row.id,
  storedIdOf: (row) => row.id,
  identity: (row) => row.owner,
  storedIdentity: (row) => row.owner,
  readById: () => Promise.resolve([]),
  takenReason: (id) => `id ${id} is someone else's`,
  unique: [{ of: (row) => row.tag ?? undefined, heldBy: (row) => row.tag ?? undefined, read: () => Promise.resolve([]), reason: (holder) => `tag ${holder} has it` }],
};
const [uniqueTag] = tags.unique;

describe('judgeIds', () => {
  it('finds a row under its own id with the same identity present, and leaves nothing to decide for it', () => {
    const verdict = judgeIds(tags, [{ id: 1, owner: 'ann', tag: 'x' }], [{ id: 1, owner: 'ann', tag: 'old' }]);
    expect(verdict).toEqual({ outcomes: ['present'], undecided: [] });
  });

  it('skips a row whose id holds another row', () => {
    const verdict = judgeIds(tags, [{ id: 1, owner: 'bob', tag: null }], [{ id: 1, owner: 'ann', tag: null }]);
    expect(verdict.outcomes).toEqual([{ skipped: 'id 1 is someone else\'s' }]);
  });

  it('skips the second row of a batch with an id already met, with the kind\'s reason or a plain one', () => {
    const rows = [
      { id: 1, owner: 'ann', tag: null },
      { id: 1, owner: 'ann', tag: null },
    ];
    expect(judgeIds(tags, rows, []).outcomes).toEqual(['inserted', { skipped: 'the source holds it twice' }]);
    expect(judgeIds({ ...tags, repeatedReason: 'once is enough' }, rows, []).outcomes[1]).toEqual({ skipped: 'once is enough' });
  });

  it('leaves a row with a new id undecided until its unique values are checked', () => {
    expect(judgeIds(tags, [{ id: 2, owner: 'ann', tag: 'x' }], [{ id: 1, owner: 'ann', tag: 'x' }])).toEqual({ outcomes: ['inserted'], undecided: [0] });
  });
});

describe('judgeUnique', () => {
  const undecided = (rows: Tag[]) => judgeIds(tags, rows, []);

  it('skips a row whose value a stored row holds, naming the holder', () => {
    const rows = [{ id: 2, owner: 'bob', tag: 'x' }];
    expect(judgeUnique(tags, uniqueTag!, rows, undecided(rows), [{ id: 1, owner: 'ann', tag: 'x' }])).toEqual({ outcomes: [{ skipped: 'tag 1 has it' }], undecided: [] });
  });

  it('lets the first row of a batch take a value, and skips the later ones naming it', () => {
    const rows = [
      { id: 2, owner: 'bob', tag: 'x' },
      { id: 3, owner: 'cy', tag: 'x' },
    ];
    expect(judgeUnique(tags, uniqueTag!, rows, undecided(rows), []).outcomes).toEqual(['inserted', { skipped: 'tag 2 has it' }]);
  });

  it('binds nothing for a row without the value', () => {
    const rows = [
      { id: 2, owner: 'bob', tag: null },
      { id: 3, owner: 'cy', tag: null },
    ];
    expect(judgeUnique(tags, uniqueTag!, rows, undecided(rows), [{ id: 1, owner: 'ann', tag: null }])).toEqual({ outcomes: ['inserted', 'inserted'], undecided: [0, 1] });
  });

  it('sees no conflict in a stored row holding the value under the row\'s own id', () => {
    const rows = [{ id: 1, owner: 'ann', tag: 'x' }];
    expect(judgeUnique(tags, uniqueTag!, rows, undecided(rows), [{ id: 1, owner: 'ann', tag: 'x' }]).undecided).toEqual([0]);
  });

  it('offers only the undecided rows: a row already skipped is not checked again', () => {
    const rows = [
      { id: 1, owner: 'bob', tag: 'x' },
      { id: 2, owner: 'cy', tag: 'x' },
    ];
    const verdict = judgeIds(tags, rows, [{ id: 1, owner: 'ann', tag: null }]);
    // Row 0 is skipped for its id, so the tag is row 1's to take.
    expect(judgeUnique(tags, uniqueTag!, rows, verdict, []).outcomes).toEqual([{ skipped: "id 1 is someone else's" }, 'inserted']);
  });
});
