import type { User } from '@latchkey/core';

/**
 * How a URL names a user (cookiecutter-django's lookup_field), shared by the user pages and the
%% if username %%
 * users API: the username, which is unique and stable.
%% else %%
 * users API: the numeric id, since users have no other public handle (an address in a URL would
 * end up in logs and Referer headers).
%% endif %%
 */
export function lookupOf(user: User): string {
%% if username %%
  return user.username ?? '';
%% else %%
  return String(user.id);
%% endif %%
}

/**
 * A path segment as Django's reverse() writes it: percent-encoded UTF-8, but with `@` and `+`
 * left as they are, since they need no escaping in a path.
 */
export function pathSegment(value: string): string {
  return encodeURIComponent(value).replace(/%40/g, '@').replace(/%2B/g, '+');
}

/** The path of the user's own page. */
export function userPagePath(user: User): string {
  return `/users/${pathSegment(lookupOf(user))}/`;
}
