import { sql, type RawBuilder } from 'kysely';

/**
 * `expression LIKE 'text%'` with LIKE's wildcards in the text escaped, so that a search for "a_b"
 * finds what starts with "a_b" only and "%" finds nothing but a percent sign. The expression is a
 * column name or SQL (the indexed expression of user-search.ts). The text is used as given: the
 * caller folds it as the column is stored (lower case addresses, username keys).
 */
export function startsWith(expression: string | RawBuilder<string>, text: string): RawBuilder<boolean> {
  const pattern = `${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  const left = typeof expression === 'string' ? sql.ref(expression) : expression;
  return sql<boolean>`${left} like ${pattern} escape '\\'`;
}
