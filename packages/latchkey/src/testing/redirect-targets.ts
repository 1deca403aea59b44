/**
 * Where-to-next values (`next`, RelayState, a headless `callback_url` on this site) that pass the
 * same-site check but cannot be put in a Location header as they are (issue 30): characters
 * outside ASCII, encoded, raw, or percent-encoded as Latin-1 rather than UTF-8; and the ones that
 * must fall back: control characters, and a path that only becomes another host once serialised.
 */
export interface RedirectTargetCase {
  /** What the case is, for the test's messages. */
  name: string;
  /** The value as a query string or a form body carries it: percent-encoded, or raw UTF-8. */
  wire: string;
  /** The Location a redirect to it must send (percent-encoded as a browser would), or undefined where it must fall back. */
  target: string | undefined;
}

export const REDIRECT_TARGET_CASES: readonly RedirectTargetCase[] = [
  { name: 'an encoded ideographic full stop', wire: '/%E3%80%82x', target: '/%E3%80%82x' },
  { name: 'the same inside the query', wire: '/x%3Fq%3D%E3%80%82', target: '/x?q=%E3%80%82' },
  { name: 'a raw non-ASCII character', wire: '/\u3002x', target: '/%E3%80%82x' },
  { name: 'a raw Latin-1 character', wire: '/caf\u00e9', target: '/caf%C3%A9' },
  // Not UTF-8, so the form parser leaves the escape as it is: an ASCII path, followed unchanged.
  { name: 'percent-encoded Latin-1', wire: '/caf%E9', target: '/caf%E9' },
  { name: 'CR LF', wire: '/%0d%0aSet-Cookie:%20a=b', target: undefined },
  { name: 'a tab', wire: '/%09/evil.example', target: undefined },
  { name: 'a dot segment that serialises to //', wire: '/.//evil.example/', target: undefined },
];

/** The same cases as decoded values, for clients that encode their fields themselves. */
export function decodedValue(wire: string): string {
  try {
    return decodeURIComponent(wire);
  } catch {
    // An escape that is not UTF-8 (`%E9`) stays as it is, as the form parser leaves it.
    return wire;
  }
}
