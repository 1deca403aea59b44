import { describe, expect, it } from 'vitest';
import { testSettings } from '../testing/latchkey.js';
import { AccountAdapter, type UserToSave } from './adapter.js';
import { savedUserOf } from './save-user.js';

const USER = { username: 'ada', email: 'ada@example.com', name: '' };
const SIGNUP = { method: 'password' as const, fields: {} };

function answering(answer: unknown): { adapter: AccountAdapter } {
  class Answering extends AccountAdapter {
    override saveUser(): UserToSave {
      return answer as UserToSave;
    }
  }
  return { adapter: new Answering(testSettings()) };
}

describe("saveUser's answer, held to its contract before anything is written", () => {
  it('keeps the default: the name given, no extra data', async () => {
    expect(await savedUserOf({ adapter: new AccountAdapter(testSettings()) }, { ...USER, name: 'Ada' }, SIGNUP)).toEqual({ name: 'Ada' });
  });

  it('cleans the name as the profile form does, and keeps extra data as JSON gives it back', async () => {
    const saved = await savedUserOf(answering({ name: '  Ada  ', extra: { at: new Date('2024-05-01T00:00:00Z'), gone: undefined, n: 1 } }), USER, SIGNUP);
    expect(saved).toEqual({ name: 'Ada', extra: { at: '2024-05-01T00:00:00.000Z', n: 1 } });
    expect(await savedUserOf(answering({ name: 'Ada', extra: {} }), USER, SIGNUP)).toEqual({ name: 'Ada' });
  });

  it("refuses a name the profile form refuses, on the name field, as the person's", async () => {
    await expect(savedUserOf(answering({ name: 'x'.repeat(300) }), USER, SIGNUP)).rejects.toMatchObject({ code: 'invalid_input', param: 'name' });
  });

  it("says plainly when an answer is outside the contract: the project's mistake", async () => {
    for (const answer of [undefined, null, 'Ada', { name: 42 }, [], { name: 'Ada', extra: [] }, { name: 'Ada', extra: new Map() }]) {
      await expect(savedUserOf(answering(answer), USER, SIGNUP), JSON.stringify(answer)).rejects.toThrow(/AccountAdapter\.saveUser/);
    }
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    for (const extra of [{ big: 10n }, loop]) await expect(savedUserOf(answering({ name: 'Ada', extra }), USER, SIGNUP)).rejects.toThrow(/JSON can hold/);
  });
});
