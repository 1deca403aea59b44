import type { User } from '@latchkey/core';

/**
 * How a URL names a user (cookiecutter-django's lookup_field), shared by the user pages and the
 * users API: the username, which is unique and stable.
 */
export function lookupOf(user: User): string {
  return user.username ?? '';
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
