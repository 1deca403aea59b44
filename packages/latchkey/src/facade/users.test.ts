/**
 * latchkey.users as a project's code uses it: finding accounts, counting them, creating and
 * updating them, deactivating them, and setting and checking their passwords.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { latchkeyErrorOf } from '../testing/latchkey-error.js';

const PASSWORD = 'a long enough passphrase';
const NEW_PASSWORD = 'another quite long passphrase';



describe.each(testDatabaseKinds())('latchkey.users: finding and counting accounts on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('finds a created user by id, email, username and login', async () => {
    latchkey = await createTestLatchkey({ kind, settings: { ACCOUNT_LOGIN_METHODS: ['username', 'email'] } });
    const ada = await latchkey.users.create({ username: 'ada', email: 'Ada@Example.com', password: PASSWORD, name: 'Ada Lovelace', emailVerified: true });
    expect(ada).toMatchObject({ username: 'ada', email: 'ada@example.com', name: 'Ada Lovelace', isActive: true, isStaff: false, isSuperuser: false });

    expect((await latchkey.users.findById(ada.id))?.username).toBe('ada');
    expect((await latchkey.users.findByEmail('ADA@example.com'))?.id).toBe(ada.id);
    expect((await latchkey.users.findByUsername('ada'))?.id).toBe(ada.id);
    expect((await latchkey.users.findByLogin('ada'))?.id).toBe(ada.id);
    expect((await latchkey.users.findByLogin(' ada@example.com '))?.id).toBe(ada.id);
  });

  it('finds a username as people type it: case and width folded', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect((await latchkey.users.findByUsername('ADA'))?.id).toBe(ada.id);
    expect((await latchkey.users.findByUsername('ａｄａ'))?.id).toBe(ada.id);
    expect((await latchkey.users.findByLogin('Ada'))?.id).toBe(ada.id);
  });

  it('finds nobody for an id, address, username or login that no account has', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect(await latchkey.users.findById(ada.id + 1000)).toBeUndefined();
    expect(await latchkey.users.findByEmail('grace@example.com')).toBeUndefined();
    expect(await latchkey.users.findByEmail('not an address')).toBeUndefined();
    expect(await latchkey.users.findByUsername('grace')).toBeUndefined();
    expect(await latchkey.users.findByLogin('grace')).toBeUndefined();
    expect(await latchkey.users.findByLogin('')).toBeUndefined();
  });

  it('logs in by username only, unless the project lists email among the login methods', async () => {
    latchkey = await createTestLatchkey({ kind });
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect(await latchkey.users.findByLogin('ada@example.com')).toBeUndefined();
    expect((await latchkey.users.findByLogin('ada'))?.username).toBe('ada');
  });

  it('finds the oldest account by an address several accounts share in a username project', async () => {
    latchkey = await createTestLatchkey({ kind });
    const first = await latchkey.users.create({ username: 'first', email: 'shared@example.com', password: PASSWORD, emailVerified: false });
    await latchkey.users.create({ username: 'second', email: 'shared@example.com', password: PASSWORD, emailVerified: false });
    expect((await latchkey.users.findByEmail('shared@example.com'))?.id).toBe(first.id);
  });

  it('has no usernames in an email project: findByUsername finds nobody, and the address logs in', async () => {
    latchkey = await createTestLatchkey({ kind, usernameType: 'email' });
    const ada = await latchkey.users.create({ email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect(await latchkey.users.findByUsername('ada')).toBeUndefined();
    expect(await latchkey.users.findByUsername('ada@example.com')).toBeUndefined();
    expect((await latchkey.users.findByLogin('ADA@example.com'))?.id).toBe(ada.id);
    expect((await latchkey.users.findByEmail('ada@example.com'))?.id).toBe(ada.id);
  });

  it('counts the accounts', async () => {
    latchkey = await createTestLatchkey({ kind });
    expect(await latchkey.users.count()).toBe(0);
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.users.create({ username: 'grace', password: null, emailVerified: false });
    expect(await latchkey.users.count()).toBe(2);
  });
});

describe.each(testDatabaseKinds())('latchkey.users.create on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('creates the primary address with the user, verified as asked', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect(await latchkey.emailAddresses.listForUser(ada)).toEqual([expect.objectContaining({ email: 'ada@example.com', verified: true, primary: true })]);
  });

  it('refuses a taken username or address, a weak password and a malformed username or address, creating nothing', async () => {
    latchkey = await createTestLatchkey({ kind });
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });

    expect(await latchkeyErrorOf(() => latchkey.users.create({ username: 'ADA', email: 'other@example.com', password: PASSWORD, emailVerified: true }))).toMatchObject({
      code: 'username_taken',
    });
    expect(await latchkeyErrorOf(() => latchkey.users.create({ username: 'grace', email: 'ada@example.com', password: PASSWORD, emailVerified: true }))).toMatchObject({
      code: 'email_taken',
    });
    expect(await latchkeyErrorOf(() => latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: '1234', emailVerified: true }))).toMatchObject({
      code: 'password_invalid',
    });
    expect(await latchkeyErrorOf(() => latchkey.users.create({ username: 'gr ace', email: 'grace@example.com', password: PASSWORD, emailVerified: true }))).toMatchObject({
      code: 'invalid_username',
    });
    expect(await latchkeyErrorOf(() => latchkey.users.create({ username: 'grace', email: 'grace', password: PASSWORD, emailVerified: true }))).toMatchObject({
      code: 'invalid_email',
    });

    expect(await latchkey.users.count()).toBe(1);
    expect(await latchkey.users.findByUsername('grace')).toBeUndefined();
    expect(await latchkey.users.findByEmail('other@example.com')).toBeUndefined();
  });

  it('makes an account without a usable password when the password is null', async () => {
    latchkey = await createTestLatchkey({ kind });
    await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    expect(await latchkey.users.findByLogin('ada')).toBeDefined();
    expect(await latchkey.users.checkPassword('ada', '')).toBeUndefined();
    expect(await latchkey.users.checkPassword('ada', PASSWORD)).toBeUndefined();
  });
});

describe.each(testDatabaseKinds())('latchkey.users.update on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('cleans the name as the forms do and returns the stored user', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, name: 'Ada', emailVerified: true });
    // "e" followed by a combining acute accent, and surrounding whitespace.
    const updated = await latchkey.users.update(ada, { name: '  Rene\u0301e Lovelace \n' });
    expect(updated.name).toBe('Ren\u00e9e Lovelace');
    expect((await latchkey.users.findById(ada.id))?.name).toBe('Ren\u00e9e Lovelace');
  });

  it('accepts a name of 255 characters counted as code points, and refuses 256 with invalid_input, leaving the name as it was', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, name: 'Ada', emailVerified: true });

    const emoji = '\u{1F600}'.repeat(255);
    expect((await latchkey.users.update(ada, { name: emoji })).name).toBe(emoji);

    const error = await latchkeyErrorOf(() => latchkey.users.update(ada, { name: 'a'.repeat(256) }));
    expect(error).toMatchObject({ code: 'invalid_input', param: 'name' });
    expect((await latchkey.users.findById(ada.id))?.name).toBe(emoji);
  });

  it('refuses a name with a null character', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, name: 'Ada', emailVerified: true });
    expect(await latchkeyErrorOf(() => latchkey.users.update(ada, { name: 'Ada\u0000' }))).toMatchObject({ code: 'invalid_input', param: 'name' });
    expect((await latchkey.users.findById(ada.id))?.name).toBe('Ada');
  });

  it('sets and clears the staff and superuser flags, leaving the fields not given alone', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, name: 'Ada', emailVerified: true });

    const staff = await latchkey.users.update(ada, { isStaff: true });
    expect(staff).toMatchObject({ isStaff: true, isSuperuser: false, name: 'Ada', isActive: true });

    const superuser = await latchkey.users.update(ada, { isSuperuser: true });
    expect(superuser).toMatchObject({ isStaff: true, isSuperuser: true, name: 'Ada' });

    await latchkey.users.update(ada, { isStaff: false, isSuperuser: false });
    expect(await latchkey.users.findById(ada.id)).toMatchObject({ isStaff: false, isSuperuser: false, name: 'Ada' });
  });

  it('changes nothing and returns the stored user when no field is given', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, name: 'Ada', emailVerified: true });
    expect(await latchkey.users.update(ada, {})).toMatchObject({ id: ada.id, name: 'Ada', isStaff: false });
  });

  it('refuses to update an account that is gone with not_found', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    // No public operation deletes an account (that is the admin's); the store stands in for it.
    await latchkey.deps.store.users.delete(ada.id);

    expect(await latchkeyErrorOf(() => latchkey.users.update(ada, { name: 'Ada' }))).toMatchObject({ code: 'not_found' });
    expect(await latchkeyErrorOf(() => latchkey.users.update(ada, { isStaff: true }))).toMatchObject({ code: 'not_found' });
    expect(await latchkeyErrorOf(() => latchkey.users.update(ada, {}))).toMatchObject({ code: 'not_found' });
    expect(await latchkeyErrorOf(() => latchkey.users.update({ id: ada.id + 1000 }, { name: 'Nobody' }))).toMatchObject({ code: 'not_found' });
    expect(await latchkey.users.count()).toBe(0);
  });
});

describe.each(testDatabaseKinds())('latchkey.users.deactivate on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('marks the account inactive, ends every session and deletes the API token', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(ada);
    const key = await latchkey.apiTokens.issue(ada);
    expect(await latchkey.sessions.listForUser(ada)).toHaveLength(2);
    expect((await latchkey.apiTokens.userFor(key))?.id).toBe(ada.id);

    await latchkey.users.deactivate(ada);

    expect((await latchkey.users.findById(ada.id))?.isActive).toBe(false);
    expect(await latchkey.sessions.listForUser(ada)).toEqual([]);
    expect(await latchkey.apiTokens.userFor(key)).toBeUndefined();
    // The token is gone, not only refused: there is nothing left to delete.
    expect(await latchkey.apiTokens.delete(ada)).toBe(false);
  });

  it("leaves the other users' sessions and tokens alone", async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.sessions.startSignedIn(grace);
    const key = await latchkey.apiTokens.issue(grace);

    await latchkey.users.deactivate(ada);

    expect(await latchkey.sessions.listForUser(grace)).toHaveLength(1);
    expect((await latchkey.apiTokens.userFor(key))?.id).toBe(grace.id);
    expect((await latchkey.users.findById(grace.id))?.isActive).toBe(true);
  });

  it('still lets checkPassword return the inactive account: what it may do is the caller’s to decide', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.users.deactivate(ada);
    expect(await latchkey.users.checkPassword('ada', PASSWORD)).toMatchObject({ id: ada.id, isActive: false });
  });
});

describe.each(testDatabaseKinds())('latchkey.users passwords on %s', (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('checkPassword returns the user for the right password only', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    expect((await latchkey.users.checkPassword('ada', PASSWORD))?.id).toBe(ada.id);
    expect(await latchkey.users.checkPassword('ada', 'not the passphrase')).toBeUndefined();
    expect(await latchkey.users.checkPassword('nobody', PASSWORD)).toBeUndefined();
  });

  it('setPassword ends every session, and then only the new password is accepted', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.sessions.startSignedIn(ada);
    await latchkey.sessions.startSignedIn(ada);

    await latchkey.users.setPassword(ada, NEW_PASSWORD);

    expect(await latchkey.sessions.listForUser(ada)).toEqual([]);
    expect((await latchkey.users.checkPassword('ada', NEW_PASSWORD))?.id).toBe(ada.id);
    expect(await latchkey.users.checkPassword('ada', PASSWORD)).toBeUndefined();
  });

  it('setPassword refuses a password the validators reject, and changes nothing', async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.sessions.startSignedIn(ada);

    expect(await latchkeyErrorOf(() => latchkey.users.setPassword(ada, '1234'))).toMatchObject({ code: 'password_invalid' });

    expect(await latchkey.sessions.listForUser(ada)).toHaveLength(1);
    expect((await latchkey.users.checkPassword('ada', PASSWORD))?.id).toBe(ada.id);
    expect(await latchkey.users.checkPassword('ada', '1234')).toBeUndefined();
  });

  it("setPassword leaves the other users' sessions alone", async () => {
    latchkey = await createTestLatchkey({ kind });
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    const grace = await latchkey.users.create({ username: 'grace', email: 'grace@example.com', password: PASSWORD, emailVerified: true });
    await latchkey.sessions.startSignedIn(grace);
    await latchkey.users.setPassword(ada, NEW_PASSWORD);
    expect(await latchkey.sessions.listForUser(grace)).toHaveLength(1);
  });

  it('validatePassword throws password_invalid listing every problem, and accepts a good password', async () => {
    latchkey = await createTestLatchkey({ kind });
    const error = await latchkeyErrorOf(() => latchkey.users.validatePassword('1234'));
    expect(error.code).toBe('password_invalid');
    expect(error.message).toContain('too short');
    expect(error.message).toContain('entirely numeric');

    expect(() => latchkey.users.validatePassword(PASSWORD)).not.toThrow();
  });

  it('validatePassword compares the password with the user given', async () => {
    latchkey = await createTestLatchkey({ kind });
    const user = { username: 'adalovelace', email: 'adalovelace@example.com', name: 'Ada Lovelace' };
    expect(() => latchkey.users.validatePassword('adalovelace1', undefined)).not.toThrow();
    expect(await latchkeyErrorOf(() => latchkey.users.validatePassword('adalovelace1', user))).toMatchObject({ code: 'password_invalid' });
  });
});
