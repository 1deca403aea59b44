/**
 * The admin's users search (UserRepository.search) on each database: by the start of a name or of
 * its second word, each sort order both ways with ties broken by id, and keyset pages that lose
 * and repeat no user, with the search and the filters on.
 */
import { describe, expect, it } from 'vitest';
import type { User } from '../../account/model.js';
import type { UserOrder, UserSearch, UserSortField } from '../../account/ports.js';
import { createUser, expectLatchkeyError, JOINED, useFreshDatabase, type ConformanceTarget } from './harness.js';
import type { Store } from '../../store.js';

const ids = (users: { id: number }[]) => users.map((user) => user.id);

/** Every page of a search, `limit` users at a time, each continuing after the last one. */
async function allPages(store: Store, search: Omit<UserSearch, 'afterId'>): Promise<number[]> {
  const seen: number[] = [];
  for (let pages = 0; pages < 50; pages++) {
    const page = await store.users.search({ ...search, ...(seen.length === 0 ? {} : { afterId: seen.at(-1)! }) });
    seen.push(...ids(page));
    if (page.length < search.limit) return seen;
  }
  throw new Error('the pages never end');
}

/** The order the list promises: the field's value (text in lower case, compared by code point), then the id; all reversed when descending. */
function expectedOrder(users: User[], order: UserOrder): number[] {
  const descending = order.startsWith('-');
  const field = (descending ? order.slice(1) : order) as UserSortField;
  const value = (user: User): string | number =>
    field === 'id' ? user.id : field === 'date_joined' ? user.dateJoined.getTime() : field === 'username' ? user.username!.toLowerCase() : user[field].toLowerCase();
  const sorted = [...users].sort((a, b) => {
    const [x, y] = [value(a), value(b)];
    return x < y ? -1 : x > y ? 1 : a.id - b.id;
  });
  return ids(descending ? sorted.reverse() : sorted);
}

export function describeUserSearch(target: ConformanceTarget): void {
  const { usernameType } = target;
  const fields: UserSortField[] = usernameType === 'username' ? ['username', 'email', 'name', 'date_joined', 'id'] : ['email', 'name', 'date_joined', 'id'];

  describe('UserRepository.search: names, orders and pages', () => {
    const database = useFreshDatabase(target);
    const store = () => database().store;
    const person = (login: string, name: string, extra: Parameters<typeof createUser>[3] = {}) => createUser(store(), usernameType, login, { name, ...extra });

    it('finds a user by the start of the name or of its second word, in any case, with the filters', async () => {
      const ada = await person('ada', 'Ada Lovelace');
      const grace = await person('grace', 'Grace Brewster Hopper', { isStaff: true });
      const alan = await person('alan', 'alan turing');
      const percent = await person('pct', '100% Lovelace_Fan');
      const found = async (text: string, filters: Partial<UserSearch> = {}) => ids(await store().users.search({ text, order: 'id', limit: 10, ...filters }));
      expect(await found('ADA')).toEqual([ada.id]);
      expect(await found('love')).toEqual([ada.id, percent.id]);
      expect(await found('Ada Love')).toEqual([ada.id]);
      expect(await found('  lovelace ')).toEqual([ada.id, percent.id]);
      expect(await found('brew')).toEqual([grace.id]);
      expect(await found('Turing')).toEqual([alan.id]);
      // A third word, or the middle of a word, is not a start.
      expect(await found('hopper')).toEqual([]);
      expect(await found('uring')).toEqual([]);
      // LIKE's wildcards in a name are only themselves.
      expect(await found('100%')).toEqual([percent.id]);
      expect(await found('1_0')).toEqual([]);
      expect(await found('lovelace_')).toEqual([percent.id]);
      expect(await found('g', { isStaff: true })).toEqual([grace.id]);
      expect(await found('a', { isStaff: false, order: '-id' })).toEqual([alan.id, ada.id]);
    });

    it('sorts by each field both ways, equal values in id order, and pages through without losing or repeating a user', async () => {
      // Names and join dates repeat, and differ in case only, so that ties cross the pages' edges.
      const names = ['bob', 'Alice', 'alice', 'Carol', 'bob', 'ALICE', 'dave', 'Bob'];
      const users: User[] = [];
      for (const [index, name] of names.entries()) {
        const login = `${['Kim', 'al', 'Zed', 'bo', 'mo', 'Ann', 'cy', 'Eve'][index]}${index}`;
        users.push(await person(login, name, { dateJoined: new Date(JOINED.getTime() + (index % 3) * 60_000) }));
      }
      for (const field of fields) {
        for (const order of [field, `-${field}`] as UserOrder[]) {
          const expected = expectedOrder(users, order);
          expect(ids(await store().users.search({ order, limit: 20 })), order).toEqual(expected);
          expect(await allPages(store(), { order, limit: 3 }), order).toEqual(expected);
          expect(await allPages(store(), { order, limit: 1 }), order).toEqual(expected);
        }
      }
    });

    it('keeps the order and the filters across pages of a search', async () => {
      const users: User[] = [];
      for (let index = 0; index < 12; index++) {
        users.push(await person(`same${index}`, index % 5 === 0 ? 'Other Person' : 'Same Name', { isStaff: index % 3 !== 0, dateJoined: JOINED }));
      }
      const matching = users.filter((user) => user.name === 'Same Name' && user.isStaff);
      for (const order of ['name', '-name', 'date_joined', '-date_joined'] as UserOrder[]) {
        expect(await allPages(store(), { text: 'same n', isStaff: true, order, limit: 1 }), order).toEqual(expectedOrder(matching, order));
      }
      const named = users.filter((user) => user.name === 'Same Name');
      expect(await allPages(store(), { text: 'name', order: '-name', limit: 2 })).toEqual(expectedOrder(named, '-name'));
    });

    if (usernameType === 'email') {
      it('refuses to sort by username where users have none', async () => {
        await expectLatchkeyError(store().users.search({ order: 'username', limit: 10 }), 'invalid_input');
        await expectLatchkeyError(store().users.search({ order: '-username', limit: 10 }), 'invalid_input');
      });
    }
  });
}
