import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../model.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { createUser } from '../users.js';
import { NAME_NOT_TEXT, NAME_TOO_LONG } from '../names.js';
import { englishText } from '../../core/i18n/message.js';
import { updateProfile } from './profile.js';

const client = { ip: '203.0.113.7', userAgent: 'vitest' };

describe.each(testDatabaseKinds())('the profile flow on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  afterEach(() => latchkey.destroy());

  async function setUp() {
    latchkey = await createTestLatchkey({ kind });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', name: 'Ada', password: null, emailVerified: true });
  }
  const stored = async () => (await latchkey.deps.store.users.findById(ada.id))!;

  it('stores the new name composed and trimmed, and changes nothing else', async () => {
    await setUp();
    // "Zoë" with a combining diaeresis: stored as the single precomposed character.
    const updated = await updateProfile(latchkey.deps, { user: ada, name: '  Zoe\u0308 Lovelace \n', client });
    expect(updated.name).toBe('Zo\u00eb Lovelace');
    expect(await stored()).toEqual({ ...ada, name: 'Zo\u00eb Lovelace' });
  });

  it('allows an empty name, and a name of exactly 255 characters counted as a person counts them', async () => {
    await setUp();
    expect((await updateProfile(latchkey.deps, { user: ada, name: '   ', client })).name).toBe('');
    // 255 emoji are 510 UTF-16 units, but 255 characters, as Django and PostgreSQL count them.
    const longest = '\u{1F600}'.repeat(255);
    expect((await updateProfile(latchkey.deps, { user: ada, name: longest, client })).name).toBe(longest);
    expect((await stored()).name).toBe(longest);
  });

  it('refuses a name over 255 characters, or one with a null character or a lone surrogate, writing nothing', async () => {
    await setUp();
    const refusals: [string, string][] = [
      ['x'.repeat(256), englishText(NAME_TOO_LONG)],
      ['\u{1F600}'.repeat(256), englishText(NAME_TOO_LONG)],
      ['Ada\u0000', englishText(NAME_NOT_TEXT)],
      ['Ada \ud800', englishText(NAME_NOT_TEXT)],
    ];
    for (const [name, message] of refusals) {
      await expect(updateProfile(latchkey.deps, { user: ada, name, client })).rejects.toMatchObject({ code: 'invalid_input', param: 'name', message });
    }
    // Whitespace around a long name is not counted: it is removed before the length is.
    expect((await updateProfile(latchkey.deps, { user: ada, name: ` ${'x'.repeat(255)} `, client })).name).toBe('x'.repeat(255));
    await updateProfile(latchkey.deps, { user: ada, name: 'Ada', client });
    expect(await stored()).toEqual(ada);
  });

  it('refuses to write for an account deleted meanwhile', async () => {
    await setUp();
    await latchkey.deps.store.users.delete(ada.id);
    await expect(updateProfile(latchkey.deps, { user: ada, name: 'Ghost', client })).rejects.toMatchObject({ code: 'not_found' });
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });
});
