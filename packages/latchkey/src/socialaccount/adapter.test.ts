import { describe, expect, it } from 'vitest';
import type { UsernameType } from '../config/settings.js';
import { testSettings } from '../testing/latchkey.js';
import { SocialAccountAdapter, type ProviderUserData, type SocialLogin } from './adapter.js';
import { NAME_MAX_LENGTH } from '../account/names.js';

function adapterFor(usernameType: UsernameType = 'username', env: Record<string, string> = {}): SocialAccountAdapter {
  return new SocialAccountAdapter(testSettings({ usernameType, env }));
}

function loginWith(data: ProviderUserData): SocialLogin {
  return { provider: 'openid_connect', uid: 'sub-1234', data };
}

describe('SocialAccountAdapter.isOpenForSignup', () => {
  it('is open when ACCOUNT_ALLOW_REGISTRATION is true (the default)', async () => {
    expect(await adapterFor().isOpenForSignup(loginWith({}))).toBe(true);
    expect(await adapterFor('username', { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'true' }).isOpenForSignup(loginWith({}))).toBe(true);
  });

  it('is closed when ACCOUNT_ALLOW_REGISTRATION is false, the same switch as local signup', async () => {
    expect(await adapterFor('username', { LATCHKEY_ACCOUNT_ALLOW_REGISTRATION: 'false' }).isOpenForSignup(loginWith({}))).toBe(false);
    const fromProjectFile = new SocialAccountAdapter(testSettings({ settings: { ACCOUNT_ALLOW_REGISTRATION: false } }));
    expect(await fromProjectFile.isOpenForSignup(loginWith({ email: 'ada@example.com' }))).toBe(false);
  });

  it('can be overridden by a project, per provider', () => {
    class CorpOnly extends SocialAccountAdapter {
      override isOpenForSignup(login: SocialLogin): boolean {
        return login.provider === 'corp';
      }
    }
    const adapter = new CorpOnly(testSettings());
    expect(adapter.isOpenForSignup({ provider: 'corp', uid: '1', data: {} })).toBe(true);
    expect(adapter.isOpenForSignup({ provider: 'github', uid: '1', data: {} })).toBe(false);
  });
});

describe('SocialAccountAdapter.populateUser: the name', () => {
  const nameOf = async (data: ProviderUserData) => (await adapterFor().populateUser(loginWith(data))).name;

  it("takes the provider's name when it gave one", async () => {
    expect(await nameOf({ name: 'Ada Lovelace', firstName: 'Augusta', lastName: 'King' })).toBe('Ada Lovelace');
  });

  it('joins the first and last names with a space when there is no name', async () => {
    expect(await nameOf({ firstName: 'Ada', lastName: 'Lovelace' })).toBe('Ada Lovelace');
  });

  it('uses the first name alone, or the last name alone, without a stray space', async () => {
    expect(await nameOf({ firstName: 'Ada' })).toBe('Ada');
    expect(await nameOf({ lastName: 'Lovelace' })).toBe('Lovelace');
    expect(await nameOf({ firstName: '  ', lastName: ' Lovelace ' })).toBe('Lovelace');
  });

  it('falls back to the first and last names when the name is blank', async () => {
    expect(await nameOf({ name: '   ', firstName: 'Ada', lastName: 'Lovelace' })).toBe('Ada Lovelace');
    expect(await nameOf({ name: '', lastName: 'Lovelace' })).toBe('Lovelace');
  });

  it('is empty when the provider gave no name at all', async () => {
    expect(await nameOf({})).toBe('');
    expect(await nameOf({ name: ' ', firstName: '', lastName: '\t' })).toBe('');
  });

  it('is trimmed and composed, as cleanName stores every name', async () => {
    expect(await nameOf({ name: '  Rene\u0301e  ' })).toBe('Ren\u00e9e');
  });

  it(`is cut to NAME_MAX_LENGTH (${NAME_MAX_LENGTH}) characters instead of refusing the sign-in`, async () => {
    expect(await nameOf({ name: 'a'.repeat(NAME_MAX_LENGTH + 45) })).toBe('a'.repeat(NAME_MAX_LENGTH));
    // Counted in code points, as cleanName counts: an emoji is one character and is not split.
    const emoji = '\u{1F600}';
    expect(await nameOf({ name: emoji.repeat(NAME_MAX_LENGTH + 1) })).toBe(emoji.repeat(NAME_MAX_LENGTH));
    // A cut that ends on a space leaves no trailing space.
    const cutAtSpace = await nameOf({ firstName: 'a'.repeat(NAME_MAX_LENGTH - 1), lastName: 'Lovelace' });
    expect(cutAtSpace).toBe('a'.repeat(NAME_MAX_LENGTH - 1));
  });

  it('drops characters that cannot be stored instead of refusing the sign-in', async () => {
    expect(await nameOf({ name: 'Ada\u0000 Love\uD800lace' })).toBe('Ada Lovelace');
  });
});

describe('SocialAccountAdapter.populateUser: email and username', () => {
  it('in a username project: the trimmed email and the username the provider gave', async () => {
    const user = await adapterFor('username').populateUser(loginWith({ email: ' ada@example.com ', username: ' ada ', name: 'Ada' }));
    expect(user).toEqual({ email: 'ada@example.com', username: 'ada', name: 'Ada' });
  });

  it('in a username project: no username when the provider gave none, or a blank one', async () => {
    expect(await adapterFor('username').populateUser(loginWith({ email: 'ada@example.com' }))).toEqual({ email: 'ada@example.com', name: '' });
    expect(await adapterFor('username').populateUser(loginWith({ username: '  ' }))).toEqual({ email: '', name: '' });
  });

  it('in an email project: never a username, even when the provider gave one', async () => {
    const user = await adapterFor('email').populateUser(loginWith({ email: 'ada@example.com', username: 'ada', firstName: 'Ada' }));
    expect(user).toEqual({ email: 'ada@example.com', name: 'Ada' });
    expect('username' in user).toBe(false);
  });

  it('an empty email when the provider gave none', async () => {
    expect((await adapterFor('email').populateUser(loginWith({ name: 'Ada' }))).email).toBe('');
    expect((await adapterFor('username').populateUser(loginWith({ email: '   ' }))).email).toBe('');
  });

  it('treats values that are not text (null from a JSON profile) as absent', async () => {
    const data = { email: null, username: 42, name: null, firstName: 'Ada' } as unknown as ProviderUserData;
    expect(await adapterFor('username').populateUser(loginWith(data))).toEqual({ email: '', name: 'Ada' });
  });

  it('can be extended by a project to fill more', async () => {
    class NamedAfterProvider extends SocialAccountAdapter {
      override async populateUser(login: SocialLogin) {
        const user = await super.populateUser(login);
        return { ...user, name: user.name || `${login.provider} user` };
      }
    }
    expect(await new NamedAfterProvider(testSettings()).populateUser(loginWith({ email: 'ada@example.com' }))).toEqual({
      email: 'ada@example.com',
      name: 'openid_connect user',
    });
  });
});
