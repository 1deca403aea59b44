import { describe, expect, it } from 'vitest';
import { ACCOUNT_URLS, ADMIN_URLS, latchkeyUrls, urlFor } from './url-names.js';

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

describe('latchkeyUrls, one Latchkey\'s paths', () => {
  const urls = latchkeyUrls({ ADMIN_URL: 'staff-7f3k/', URL_PREFIX: '' });

  it("names a provider's pages by one name each, the provider or organisation as a parameter", () => {
    expect(urls.urlFor('socialaccount_provider_login', { provider: 'amazon-cognito' })).toBe('/accounts/amazon-cognito/login/');
    expect(urls.urlFor('openid_connect_callback', { provider: 'corp' })).toBe('/accounts/oidc/corp/login/callback/');
    expect(urls.urlFor('saml_acs', { organization: 'acme' })).toBe('/accounts/saml/acme/acs/');
  });

  it("names the admin's pages under ADMIN_URL, a model's by its app and name", () => {
    expect(urls.urlFor('admin:index')).toBe('/staff-7f3k/');
    expect(urls.urlFor('admin:login', {}, { next: '/staff-7f3k/' })).toBe('/staff-7f3k/login/?next=%2Fstaff-7f3k%2F');
    expect(urls.urlFor('admin:model_change', { app: 'users', model: 'user', id: 7 })).toBe('/staff-7f3k/users/user/7/change/');
    expect(() => urls.urlFor('admin:model_change', { app: 'users', model: 'user' })).toThrow(/needs the parameter id/);
  });

  it('gives the path a route is registered at: the parameters given filled in, the others left for the router', () => {
    expect(urls.route('account_confirm_email')).toBe('/accounts/confirm-email/:key/');
    expect(urls.route('admin:model_delete', { app: 'sessions', model: 'session' })).toBe('/staff-7f3k/sessions/session/:id/delete/');
  });

  it('names each admin path once, and no name twice across the tables', () => {
    const paths = Object.values(ADMIN_URLS);
    expect(new Set(paths).size).toBe(paths.length);
    expect(Object.keys(ADMIN_URLS).filter((name) => Object.hasOwn(ACCOUNT_URLS, name))).toEqual([]);
  });
});

describe('latchkeyUrls under URL_PREFIX', () => {
  const urls = latchkeyUrls({ ADMIN_URL: 'admin/', URL_PREFIX: '/auth' });

  it('links every page under the prefix, the account pages as the admin', () => {
    expect(urls.urlFor('account_login', {}, { next: '/auth/accounts/email/' })).toBe('/auth/accounts/login/?next=%2Fauth%2Faccounts%2Femail%2F');
    expect(urls.urlFor('account_confirm_email', { key: 'k' })).toBe('/auth/accounts/confirm-email/k/');
    expect(urls.urlFor('admin:model_changelist', { app: 'users', model: 'user' })).toBe('/auth/admin/users/user/');
    expect(urls.mounted('/static/latchkey/latchkey.css')).toBe('/auth/static/latchkey/latchkey.css');
  });

  it("registers routes at the tables' paths, inside the plugin's prefixed scope", () => {
    expect(urls.route('account_login')).toBe('/accounts/login/');
    expect(urls.route('admin:index')).toBe('/admin/');
  });
});
