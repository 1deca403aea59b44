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
 * - The project's fields the admin searches (`admin.search`, docs/user-fields.md) are found by
 *   their start too, in any case, on `lower(column)`: the index addUserFieldSearchIndex makes is on
 *   that expression, so that the search stays one index range per field. A project that has not
 *   made it still gets the right rows, by reading the table.
 * - The project's fields the admin filters by (`admin.filter`: booleans and choices) are compared
 *   for equality, as the staff and active flags are.
 */
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { UserOrder, UserSearch, UserSortField } from '../../account/ports.js';
import { LatchkeyError } from '../../core/errors.js';
import { normalizeUsernameKey } from '../../core/identifiers.js';
import { isTextKind, type UserField } from '../../core/user-fields.js';
import type { DatabaseDialect, QueryContext } from './dialect.js';
import { startsWith } from './like.js';
import { toBooleanColumn, type UsersTable } from './schema.js';
import { toUserFieldColumn } from './user-field-columns.js';

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

/** The project's fields the admin's search looks in: those declared `admin.search`, of a text kind. */
export function searchedUserFields(fields: readonly UserField[]): UserField[] {
  return fields.filter((field) => field.admin !== false && field.admin.search && isTextKind(field.type));
}

/** A searched field's expression, as its index (addUserFieldSearchIndex) is built on it, before the collation. */
function userFieldExpression(name: string): RawBuilder<string> {
  return sql<string>`lower(${sql.ref(name)})`;
}

function userFieldSearchIndexName(name: string): string {
  return `latchkey_users_${name}_search`;
}

/**
 * The index that keeps the admin's search in a project field one index range (a migration of the
 * project's makes it, after the field's column): on the very expression the search is written on,
 * under the same collation as Latchkey's own search indexes (migration 0007).
 */
export async function addUserFieldSearchIndex(db: Kysely<object>, dialect: DatabaseDialect, name: string): Promise<void> {
  const collation = dialect === 'postgres' ? sql.raw('collate "C"') : sql.raw('collate nocase');
  await sql`create index ${sql.id(userFieldSearchIndexName(name))} on latchkey_users ((${userFieldExpression(name)}) ${collation})`.execute(db);
}

/** Removes a field's search index (the `down` of addUserFieldSearchIndex). */
export async function dropUserFieldSearchIndex(db: Kysely<object>, name: string): Promise<void> {
  await sql`drop index ${sql.id(userFieldSearchIndexName(name))}`.execute(db);
}

/**
 * The search: the start of the address, the name or its second word on, of the username where
 * there are usernames, and of each project field the admin searches.
 */
function matches(text: string, { dialect, usernameType, userFields }: QueryContext): RawBuilder<boolean> {
  const expressions = textExpressions(dialect);
  const folded = text.toLowerCase();
  const arms = (['email', 'name', 'nameTail'] as const).map((key) => startsWith(searched(expressions[key], dialect), folded));
  if (usernameType === 'username') arms.push(startsWith(searched(expressions.username, dialect), normalizeUsernameKey(text)));
  for (const field of searchedUserFields(userFields)) {
    const arm = startsWith(searched(userFieldExpression(field.name), dialect), folded);
    // SQLite, without statistics, prices a fifth range of an OR above reading the whole table in
    // id order, and scans; the field's range as a list of ids (read from its index) it prices as
    // what it is, and keeps every arm an index range. PostgreSQL combines the ranges as they are.
    arms.push(dialect === 'sqlite' ? sql<boolean>`id in (select id from latchkey_users where ${arm})` : arm);
  }
  return sql<boolean>`(${sql.join(arms, sql` or `)})`;
}

/**
 * A project field equal to a value, for the admin's filters: only a field declared `admin.filter`
 * and a value of its type (a boolean's true or false, a choice's stored value). Anything else is
 * refused rather than compared: the name becomes a column reference.
 */
function userFieldEquals(userFields: readonly UserField[], name: string, value: string | boolean): RawBuilder<boolean> {
  const field = userFields.find((candidate) => candidate.name === name && candidate.admin !== false && candidate.admin.filter);
  const fits = field !== undefined && (field.type === 'boolean' ? typeof value === 'boolean' : typeof value === 'string');
  if (!fits) throw new LatchkeyError('invalid_input', 'The users list cannot be filtered by {name}.', { param: name, params: { name } });
  return sql<boolean>`${sql.ref(field.name)} = ${toUserFieldColumn(field, value)}`;
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
  for (const [name, value] of Object.entries(query.userFields ?? {})) select = select.where(userFieldEquals(context.userFields, name, value));
  if (query.afterId !== undefined) select = select.where(after(field, descending, query.afterId, dialect));
  const direction = descending ? 'desc' : 'asc';
  if (field !== 'id') select = select.orderBy(sortKey(field, dialect), direction);
  return select.orderBy('id', direction).limit(query.limit);
}

export function searchUsers(context: QueryContext, query: UserSearch): Promise<Selectable<UsersTable>[]> {
  return userSearchQuery(context, query).execute();
}
