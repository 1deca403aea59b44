/**
 * What the admin's lists share: their query strings, read and written back into their links, their
 * filters and sortable headers, and how they show an instant.
 */
import { msg, type Message } from '../../core/i18n/message.js';

/** Django admin's page size. */
export const PER_PAGE = 100;

/** The query string's parameters that are single strings (anything else reads as ''). */
export function queryText(query: unknown): (name: string) => string {
  const raw = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  return (name) => (typeof raw[name] === 'string' ? raw[name] : '');
}

/** A row id from the URL or the query string: digits that fit an integer column, or undefined. */
export function idParam(text: string): number | undefined {
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/** The list's query string with some parameters changed (undefined drops one), for its links. */
export function withQuery(query: Record<string, string>, changes: Record<string, string | undefined>): string {
  const merged = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...query, ...changes })) if (value !== undefined && value !== '') merged.set(name, value);
  const text = merged.toString();
  return text === '' ? '' : `?${text}`;
}

/** An instant as the admin shows it (to the minute, in UTC), with its machine-readable form for <time>. */
export function instant(date: Date | null): { at: Date; iso: string } | null {
  // The Date for the page, which writes it as the reader's language does (`| date`); ISO for `<time datetime>`.
  return date === null ? null : { at: date, iso: date.toISOString() };
}

/** A yes/no filter from the query string: '1' or '0'; anything else is no filter. */
export function flag(value: string): boolean | undefined {
  return value === '1' ? true : value === '0' ? false : undefined;
}

/**
 * One link of a filter: its label is a message (msg(), translated by the template) or text shown
 * as it is (an event's name, a provider's).
 */
export interface FilterChoice {
  label: Message | string;
  url: string;
  selected: boolean;
}

/** A filter's first link, which shows the whole list. */
export const ALL_CHOICE = msg('All');

/** The All / Yes / No links of a yes/no filter (a choice starts again from the first page). */
export function yesNoFilter(listPath: string, query: Record<string, string>, name: string, label: Message): { name: string; label: Message; choices: FilterChoice[] } {
  const choice = (choiceLabel: Message, value: string | undefined) => ({ label: choiceLabel, url: `${listPath}${withQuery(query, { [name]: value })}`, selected: query[name] === (value ?? '') });
  return { name, label, choices: [choice(ALL_CHOICE, undefined), choice(msg('Yes'), '1'), choice(msg('No'), '0')] };
}

/** A column header that sorts the list, as Django admin's: how it sorts the list now, and its link. */
export interface SortHeader {
  /** Translated by the template. */
  label: Message;
  /** For aria-sort: how the list is sorted by this column, if it is. */
  sorted: 'ascending' | 'descending' | undefined;
  url: string;
}

/**
 * The headers of the sortable columns, by field. A header's link sorts by its column ascending, or
 * descending when the list is already sorted that way by it; the search and the filters stay, and
 * paging starts again. `order` is a field with a leading '-' for descending; the default order is
 * left out of the links (the list's `o` is '' for it).
 */
export function sortHeaders(listPath: string, query: Record<string, string>, labels: Record<string, Message>, order: string, defaultOrder: string): Record<string, SortHeader> {
  const headers: Record<string, SortHeader> = {};
  for (const [field, label] of Object.entries(labels)) {
    const sorted = order === field ? 'ascending' : order === `-${field}` ? 'descending' : undefined;
    const next = sorted === 'ascending' ? `-${field}` : field;
    headers[field] = { label, sorted, url: `${listPath}${withQuery(query, { o: next === defaultOrder ? undefined : next })}` };
  }
  return headers;
}
