/**
 * The admin's users list in the database: a search by the start of a username, an address or a
 * name, the staff/superuser/active filters, and one page in a chosen order, continuing after the
 * previous page's last user (keyset paging on the sort value and the id: never OFFSET, never a count).
 *
 * Every expression below is spelled exactly as migration 0007 spells its index, collation
 * included: a database uses an index on an expression only for that same expression, so a
 * change here without a new index would quietly scan a million rows (user-search.test.ts asks
 * each database's planner).
 *
 * - Text is compared by code point ("C" on PostgreSQL; on SQLite NOCASE, which over text already
 *   lower-cased is the same), so a prefix is one range of the index, LIKE 'abc%' is served by it
 *   (PostgreSQL's default collation would need a second index with text_pattern_ops), and the
 *   order is the same on both databases.
 * - A name is found by its start or by the start of what follows its first space: "Ada Lovelace" by
 *   "ada" and by "love". A third word is not (an index per word would need a table of words).
 */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { UserOrder, UserSearch, UserSortField } from '../../account/ports.js';
import { LatchkeyError } from '../../core/errors.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import type { DatabaseDialect, QueryContext } from './dialect.js';
import { startsWith } from './like.js';
import { toBooleanColumn, type UsersTable } from './schema.js';

type TextKey = 'username' | 'email' | 'name' | 'nameTail';

/** The text expressions the indexes are built on, before their collation. */
function textExpressions(dialect: DatabaseDialect): Record<TextKey, RawBuilder<string>> {
  const firstSpace = dialect === 'postgres' ? sql`strpos(name, ' ')` : sql`instr(name, ' ')`;
  return {
    username: sql`username_key`,
    email: sql`lower(email)`,
    name: sql`lower(name)`,
    nameTail: sql`lower(ltrim(substr(name, ${firstSpace} + 1)))`,
  };
}

/** An expression under its index's collation. */
function collated(expression: RawBuilder<string>, dialect: DatabaseDialect): RawBuilder<string> {
  return dialect === 'postgres' ? sql`${expression} collate "C"` : sql`${expression} collate nocase`;
}

/**
 * The expression a LIKE is written on. PostgreSQL serves LIKE from a "C" index only when the
 * comparison is in "C" too. SQLite's LIKE, case-insensitive itself, is served from a NOCASE index
 * of the bare expression; a COLLATE written there would stop it combining the four arms of an OR.
 */
function searched(expression: RawBuilder<string>, dialect: DatabaseDialect): RawBuilder<string> {
  return dialect === 'postgres' ? collated(expression, dialect) : expression;
}

/** What a page is sorted by before the id: the field's indexed expression. */
function sortKey(field: Exclude<UserSortField, 'id'>, dialect: DatabaseDialect): RawBuilder<unknown> {
  return field === 'date_joined' ? sql`date_joined` : collated(textExpressions(dialect)[field], dialect);
}

function parseOrder(order: UserOrder): { field: UserSortField; descending: boolean } {
  const descending = order.startsWith('-');
  return { field: (descending ? order.slice(1) : order) as UserSortField, descending };
}

/** The search: the start of the address, the name or its second word on, and of the username where there are usernames. */
function matches(text: string, { dialect, usernameType }: QueryContext): RawBuilder<boolean> {
  const expressions = textExpressions(dialect);
  const folded = text.toLowerCase();
  const arms = (['email', 'name', 'nameTail'] as const).map((key) => startsWith(searched(expressions[key], dialect), folded));
  if (usernameType === 'username') arms.push(startsWith(searched(expressions.username, dialect), normalizeUsernameKey(text)));
  return sql<boolean>`(${sql.join(arms, sql` or `)})`;
}

/**
 * After the user `afterId` in the order: a greater sort value, or the same value and a greater id
 * (smaller, descending). The user's own value is read in the same statement, exactly as stored
 * (a timestamp's microseconds, the database's own lower case), so no row is repeated or skipped
 * at a page's edge. Written as `key >= v and (key > v or id > n)` rather than the row value
 * `(key, id) > (v, n)`: SQLite reads an index on an expression only for the former.
 */
function after(field: UserSortField, descending: boolean, afterId: number, dialect: DatabaseDialect): RawBuilder<boolean> {
  const [beyond, atLeast] = descending ? [sql.raw('<'), sql.raw('<=')] : [sql.raw('>'), sql.raw('>=')];
  if (field === 'id') return sql<boolean>`id ${beyond} ${afterId}`;
  const key = sortKey(field, dialect);
  const anchor = sql`(select ${key} from latchkey_users where id = ${afterId})`;
  return sql<boolean>`(${key} ${atLeast} ${anchor} and (${key} ${beyond} ${anchor} or id ${beyond} ${afterId}))`;
}

/** The statement of one page (user-search.test.ts shows it to each database's planner). */
export function userSearchQuery(context: QueryContext, query: UserSearch) {
  const { db, dialect, usernameType } = context;
  const { field, descending } = parseOrder(query.order);
  if (field === 'username' && usernameType !== 'username') {
    throw new LatchkeyError('invalid_input', 'This project signs in by email, so users have no username to sort by.', { param: 'o' });
  }
  let select = db.selectFrom('latchkey_users').selectAll();
  const text = query.text?.trim() ?? '';
  if (text !== '') select = select.where(matches(text, context));
  if (query.isStaff !== undefined) select = select.where('is_staff', '=', toBooleanColumn(query.isStaff));
  if (query.isSuperuser !== undefined) select = select.where('is_superuser', '=', toBooleanColumn(query.isSuperuser));
  if (query.isActive !== undefined) select = select.where('is_active', '=', toBooleanColumn(query.isActive));
  if (query.afterId !== undefined) select = select.where(after(field, descending, query.afterId, dialect));
  const direction = descending ? 'desc' : 'asc';
  if (field !== 'id') select = select.orderBy(sortKey(field, dialect), direction);
  return select.orderBy('id', direction).limit(query.limit);
}

export function searchUsers(context: QueryContext, query: UserSearch): Promise<Selectable<UsersTable>[]> {
  return userSearchQuery(context, query).execute();
}
