import { describe, expect, it } from 'vitest';
import { CONTAINS_SPACES, INVALID_CHARACTERS, NO_CREDENTIALS, parseTokenHeader } from './token-header.js';

const KEY = '0123456789abcdef0123456789abcdef01234567';

describe('parseTokenHeader (DRF TokenAuthentication)', () => {
  it('takes the key of "Token <key>", ignoring surrounding whitespace', () => {
    expect(parseTokenHeader(`Token ${KEY}`)).toEqual({ kind: 'key', key: KEY });
    expect(parseTokenHeader(`  Token\t${KEY}  `)).toEqual({ kind: 'key', key: KEY });
  });

  it('compares the keyword without regard to case, as DRF does', () => {
    expect(parseTokenHeader(`token ${KEY}`)).toEqual({ kind: 'key', key: KEY });
    expect(parseTokenHeader(`TOKEN ${KEY}`)).toEqual({ kind: 'key', key: KEY });
  });

  it('leaves other schemes and empty headers alone: not ours', () => {
    for (const value of [undefined, '', '   ', `Bearer ${KEY}`, 'Basic dXNlcjpwYXNz', `Tokens ${KEY}`, `Token:${KEY}`, `Token\u00a0${KEY}`]) {
      expect(parseTokenHeader(value), String(value)).toEqual({ kind: 'absent' });
    }
  });

  it('refuses "Token" alone, a key with spaces, and non-ASCII, with DRF\'s messages', () => {
    expect(parseTokenHeader('Token')).toEqual({ kind: 'malformed', detail: NO_CREDENTIALS });
    expect(parseTokenHeader('Token   ')).toEqual({ kind: 'malformed', detail: NO_CREDENTIALS });
    expect(parseTokenHeader(`Token ${KEY} extra`)).toEqual({ kind: 'malformed', detail: CONTAINS_SPACES });
    expect(parseTokenHeader('Token a b c')).toEqual({ kind: 'malformed', detail: CONTAINS_SPACES });
    expect(parseTokenHeader('Token clé')).toEqual({ kind: 'malformed', detail: INVALID_CHARACTERS });
    // UTF-8 bytes as Node reads them (latin-1 characters), and a control character.
    expect(parseTokenHeader('Token \u00c3\u00a9abc')).toEqual({ kind: 'malformed', detail: INVALID_CHARACTERS });
    expect(parseTokenHeader('Token abc\u0001')).toEqual({ kind: 'malformed', detail: INVALID_CHARACTERS });
  });

  it('reads a 10 KB value without trouble (it is simply no key of ours)', () => {
    expect(parseTokenHeader(`Token ${'a'.repeat(10 * 1024)}`)).toEqual({ kind: 'key', key: 'a'.repeat(10 * 1024) });
    expect(parseTokenHeader(`Bearer ${'a'.repeat(10 * 1024)}`)).toEqual({ kind: 'absent' });
  });
});
