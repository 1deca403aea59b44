import { sql, type RawBuilder } from 'kysely';

/**
 * `column LIKE 'text%'` with LIKE's wildcards in the text escaped, so that a search for "a_b"
 * finds what starts with "a_b" only and "%" finds nothing but a percent sign. The text is used as
 * given: the caller folds it as the column is stored (lower case addresses, username keys).
 */
export function startsWith(column: string, text: string): RawBuilder<boolean> {
  const pattern = `${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  return sql<boolean>`${sql.ref(column)} like ${pattern} escape '\\'`;
}
