/**
 * RowTable gives back the rows pushed into it, exactly: the same values (text beyond Latin-1,
 * lone surrogates and nulls included), the same fields in the same order, in key order once
 * sorted. And the dump's layouts keep every field records.ts makes, in its order.
 */
import { describe, expect, it } from 'vitest';
import { DJANGO_KINDS, type DjangoKind } from '../../django-import/model.js';
import { ROW_LAYOUTS } from './dumpdata-collector.js';
import { RowTable } from './dumpdata-row-table.js';
import { DJANGO_RECORD_MAPPERS, mapDjangoUser } from './records.js';
import type { DjangoRecord } from './values.js';

interface Sample {
  id: number | null;
  label: string | null;
  flag: boolean;
  at: Date | null;
  data: Record<string, unknown>;
}

const SAMPLE_LAYOUT = { id: 'number', label: 'text', flag: 'boolean', at: 'instant', data: 'json' } as const;

function sample(id: number, label: string | null, at: Date | null = new Date(Date.UTC(2024, 4, 6, 7, 8, 9, 123))): Sample {
  return { id, label, flag: id % 2 === 0, at, data: { id, nested: [label] } };
}

describe('RowTable', () => {
  it('gives back the rows pushed, field for field and in the same field order', () => {
    const rows = [
      sample(1, 'ascii'),
      sample(2, 'Zoë Müller, Latin-1', null),
      sample(-0, 'Ünïcödé beyond Latin-1: 山田 🙂'),
      sample(Number.MAX_SAFE_INTEGER, 'a lone surrogate \ud800 and \udc00'),
      sample(5, null),
      sample(6, ''),
      { ...sample(7, 'no id'), id: null },
    ];
    const table = new RowTable<Sample>(SAMPLE_LAYOUT);
    for (const row of rows) table.push(row);
    const out = table.slice(0, rows.length);
    expect(out).toEqual(rows);
    expect(out.map((row) => JSON.stringify(row))).toEqual(rows.map((row) => JSON.stringify(row)));
    expect(Object.is(out[2]!.id, -0)).toBe(true);
    expect(out[3]!.label).toBe(rows[3]!.label);
    expect(table.length).toBe(rows.length);
  });

  it('keeps text longer than a buffer, and many rows across chunks', () => {
    const table = new RowTable<Sample>(SAMPLE_LAYOUT);
    const long = 'x'.repeat(3 << 20);
    const count = 40_000;
    for (let id = 0; id < count; id++) table.push(sample(id, id === 20_000 ? long : `row ${id}`));
    expect(table.slice(20_000, 20_001)[0]!.label).toBe(long);
    expect(table.slice(count - 2, count + 10).map((row) => [row.id, row.label])).toEqual([
      [count - 2, `row ${count - 2}`],
      [count - 1, `row ${count - 1}`],
    ]);
    expect(table.slice(20_001, 20_002)[0]).toEqual(sample(20_001, 'row 20001'));
  });

  it('keeps JSON values as their text (a jsonText column): objects of any value, and text a lone surrogate included', () => {
    const values = [
      { company: 'Zoë — 山田 🙂', birth_date: '1990-04-01', seats: 12, newsletter: true, none: null },
      {},
      { bio: 'a lone surrogate \ud800', prefs: { theme: ['dark', 1.5] } },
    ];
    const table = new RowTable<{ id: number; columns: Record<string, unknown> }>({ id: 'number', columns: 'jsonText' });
    values.forEach((columns, id) => table.push({ id, columns }));
    expect(table.slice(0, 3).map((row) => row.columns)).toEqual(values);
    expect((table.slice(2, 3)[0]!.columns as { bio: string }).bio).toBe('a lone surrogate \ud800');
  });

  it('sorts by a number or text field, rows of equal keys staying in the order they came', () => {
    const table = new RowTable<Sample>(SAMPLE_LAYOUT);
    for (const [id, label] of [[3, 'c'], [1, 'b'], [2, 'B'], [1, 'a'], [10, 'é']] as const) table.push(sample(id, label));
    table.sortBy('id');
    expect(table.slice(0, 5).map((row) => row.label)).toEqual(['b', 'a', 'B', 'c', 'é']);
    table.sortBy('label');
    // By code unit: upper case first, as SQLite and a C collation order them.
    expect(table.slice(0, 5).map((row) => row.label)).toEqual(['B', 'a', 'b', 'c', 'é']);
    expect(table.slice(1, 3).map((row) => row.id)).toEqual([1, 1]);
  });
});

/** A record of each kind with every column, so that each mapper makes a row with all its fields. */
const RECORDS: Record<DjangoKind, DjangoRecord> = {
  users: { id: 1, username: 'ann', email: 'ann@example.com', name: 'Ann', password: '!', is_active: true, is_staff: false, is_superuser: false, date_joined: '2024-01-01T00:00:00Z', last_login: null },
  emailAddresses: { id: 1, user_id: 1, email: 'ann@example.com', verified: true, primary: true },
  tokens: { key: 'c18e7972ab108710e1f326727ae167dd4399f12b', user_id: 1, created: '2024-01-01T00:00:00Z' },
  authenticators: { id: 1, user_id: 1, type: 'totp', data: { secret: 'S' }, created_at: '2024-01-01T00:00:00Z', last_used_at: null },
  socialApps: { id: 1, provider: 'github', provider_id: '', name: 'GitHub', client_id: 'id', secret: 's', key: '', settings: {} },
  socialAccounts: { id: 1, user_id: 1, provider: 'github', uid: '1', extra_data: {}, date_joined: '2024-01-01T00:00:00Z', last_login: '2024-01-01T00:00:00Z' },
  socialTokens: { id: 1, app_id: null, account_id: 1, token: 't', token_secret: '', expires_at: null },
  permissions: { user_id: 1, app_label: 'users', codename: 'view_user', group_name: null },
};

describe('the layouts of a dump', () => {
  it.each(DJANGO_KINDS)("keep every field of %s as records.ts makes it, in its order", (kind) => {
    const row = (DJANGO_RECORD_MAPPERS[kind] as (record: DjangoRecord) => object)(RECORDS[kind]);
    expect(Object.keys(ROW_LAYOUTS[kind])).toEqual(Object.keys(row));
    const table = new RowTable<object>(ROW_LAYOUTS[kind]);
    table.push(row);
    expect(JSON.stringify(table.slice(0, 1))).toBe(JSON.stringify([row]));
  });

  it("keeps the columns a user's project fields come from", () => {
    const user = mapDjangoUser({ ...RECORDS.users, company: 'Acme', birth_date: '1990-04-01', newsletter: false }, ['company', 'birth_date', 'newsletter', 'seats']);
    expect(user.projectColumns).toEqual({ company: 'Acme', birth_date: '1990-04-01', newsletter: false });
    const table = new RowTable<object>(ROW_LAYOUTS.users);
    table.push(user);
    expect(table.slice(0, 1)).toEqual([user]);
  });
});
