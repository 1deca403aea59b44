import { describe, expect, it } from 'vitest';
import { ACCOUNT_URLS, urlFor } from './url-names.js';

describe('urlFor, allauth reverse() for the account pages', () => {
  it('gives the path of a page by its allauth name', () => {
    expect(urlFor('account_login')).toBe('/accounts/login/');
    expect(urlFor('mfa_index')).toBe('/accounts/2fa/');
    expect(urlFor('socialaccount_connections')).toBe('/accounts/3rdparty/');
  });

  it('fills a parameter in, encoded so that it cannot change the path', () => {
    expect(urlFor('account_confirm_email', { key: 'abc:def' })).toBe('/accounts/confirm-email/abc%3Adef/');
    expect(urlFor('account_reset_password_from_key', { key: '../../admin' })).toBe('/accounts/password/reset/key/..%2F..%2Fadmin/');
  });

  it('refuses to make a link without the parameter its path needs', () => {
    expect(() => urlFor('account_confirm_email')).toThrow(/needs the parameter key/);
  });

  it('adds a query, encoded as the pages encode `next`', () => {
    expect(urlFor('account_login', {}, { next: '/users/~update/?tab=2 x' })).toBe('/accounts/login/?next=%2Fusers%2F~update%2F%3Ftab%3D2%20x');
  });

  it('names each path once', () => {
    const paths = Object.values(ACCOUNT_URLS);
    expect(new Set(paths).size).toBe(paths.length);
  });
});
