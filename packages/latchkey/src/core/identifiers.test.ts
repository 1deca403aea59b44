import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from './errors.js';
import { normalizeEmail, normalizeUsernameKey, tryNormalizeEmail, validateEmail, validateUsername } from './identifiers.js';

function errorOf(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to throw');
}

describe('normalizeUsernameKey', () => {
  it('gives fullwidth, capitalised and lower-case spellings one key', () => {
    expect(normalizeUsernameKey('ＡＤＭＩＮ')).toBe('admin');
    expect(normalizeUsernameKey('Admin')).toBe('admin');
    expect(normalizeUsernameKey('admin')).toBe('admin');
  });

  it('folds the Kelvin sign with k', () => {
    expect(normalizeUsernameKey('\u212Aate')).toBe(normalizeUsernameKey('kate'));
  });

  it('applies full case folding: sharp s and both sigmas', () => {
    expect(normalizeUsernameKey('straße')).toBe(normalizeUsernameKey('STRASSE'));
    expect(normalizeUsernameKey('οδοσ')).toBe(normalizeUsernameKey('οδος'));
    expect(normalizeUsernameKey('ΟΔΟΣ')).toBe(normalizeUsernameKey('οδος'));
  });

  it('folds the dotless ı with i, and composes what case mapping decomposes', () => {
    expect(normalizeUsernameKey('admın')).toBe('admin');
    expect(normalizeUsernameKey('e\u0301')).toBe(normalizeUsernameKey('É'));
  });

  it('keeps distinct names distinct', () => {
    expect(normalizeUsernameKey('admin1')).not.toBe(normalizeUsernameKey('admin'));
    expect(normalizeUsernameKey(' admin')).not.toBe(normalizeUsernameKey('admin'));
  });
});

describe('validateUsername', () => {
  it('returns the NFKC display form, keeping the case the person typed', () => {
    expect(validateUsername('ＡＤＭＩＮ')).toBe('ADMIN');
    expect(validateUsername('Jane.Doe+test@x-y_z')).toBe('Jane.Doe+test@x-y_z');
    expect(validateUsername('Zoë')).toBe('Zoë');
    expect(validateUsername('用户名')).toBe('用户名');
  });

  it('accepts 150 characters, counted as code points, and refuses 151', () => {
    expect(validateUsername('a'.repeat(150))).toHaveLength(150);
    // U+20000 is a CJK letter outside the BMP: two UTF-16 units, one character.
    expect(validateUsername('\u{20000}'.repeat(150))).toBe('\u{20000}'.repeat(150));
    const error = errorOf(() => validateUsername('a'.repeat(151)));
    expect(isLatchkeyError(error, 'invalid_username')).toBe(true);
    expect((error as Error).message).toBe('Ensure this value has at most 150 characters (it has 151).');
  });

  it.each([
    ['empty', ''],
    ['a space inside', 'jane doe'],
    ['a comma', 'jane,doe'],
    ['a slash', 'jane/doe'],
    ['a NUL byte', 'jane\u0000'],
    ['a zero-width joiner', 'ja\u200Dne'],
    ['a right-to-left override', 'jane\u202Egpj'],
    ['an emoji', 'jane😀'],
    ['markup', '<script>'],
  ])('refuses %s with a clear message naming the field', (_label, raw) => {
    const error = errorOf(() => validateUsername(raw));
    expect(isLatchkeyError(error, 'invalid_username')).toBe(true);
    expect((error as { param?: string }).param).toBe('username');
    expect((error as Error).message.length).toBeGreaterThan(10);
  });

  it('refuses surrounding whitespace instead of trimming it silently', () => {
    for (const raw of [' jane', 'jane ', '\tjane', 'jane\n', '\u3000jane']) {
      const error = errorOf(() => validateUsername(raw));
      expect(isLatchkeyError(error, 'invalid_username')).toBe(true);
    }
    expect((errorOf(() => validateUsername(' jane')) as Error).message).toBe('Usernames cannot begin or end with whitespace.');
  });

  it.each([[null], [undefined], [42], [['admin']], [{ $ne: '' }]])('refuses a non-string (%j)', (raw) => {
    expect(isLatchkeyError(errorOf(() => validateUsername(raw)), 'invalid_username')).toBe(true);
  });
});

describe('normalizeEmail', () => {
  it('trims, lower-cases and folds fullwidth letters and the fullwidth or small at sign', () => {
    expect(normalizeEmail('  Jane.Doe@Example.COM ')).toBe('jane.doe@example.com');
    expect(normalizeEmail('ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ')).toBe('jane@example.com');
    expect(normalizeEmail('jane\uFE6Bexample.com')).toBe('jane@example.com');
  });

  it('converts a Unicode domain to punycode', () => {
    expect(normalizeEmail('jane@Bücher.example')).toBe('jane@xn--bcher-kva.example');
    expect(normalizeEmail('jane@xn--bcher-kva.example')).toBe('jane@xn--bcher-kva.example');
  });

  it('maps a dotless ı in the domain to its own punycode name, never onto the dotted one', () => {
    const mapped = normalizeEmail('jane@exampıe.com');
    expect(mapped).toMatch(/^jane@xn--/);
    expect(mapped).not.toBe('jane@example.com');
  });

  it('is idempotent, so stored addresses normalize to themselves', () => {
    for (const raw of ['Jane@Example.com', 'ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ', 'a+tag@Bücher.example', "o'brien@sub.example.org"]) {
      const once = normalizeEmail(raw);
      expect(normalizeEmail(once)).toBe(once);
    }
  });

  it('accepts every atext character of a dot-atom local part', () => {
    expect(normalizeEmail("a.b!#$%&'*+/=?^_`{|}~-z@example.com")).toBe("a.b!#$%&'*+/=?^_`{|}~-z@example.com");
  });

  it.each([
    ['no at sign', 'jane.example.com'],
    ['two at signs', 'jane@evil.com@example.com'],
    ['a comma list', 'victim@example.com,attacker@evil.com'],
    ['a semicolon list', 'victim@example.com;attacker@evil.com'],
    ['a quoted local part', '"victim@example.com"@evil.com'],
    ['a space in the local part', 'jane doe@example.com'],
    ['a dotless ı in the local part', 'jıne@example.com'],
    ['a Cyrillic а in the local part', 'j\u0430ne@example.com'],
    ['a homoglyph at sign that NFKC keeps', 'victim\u2200example.com'],
    ['a leading dot', '.jane@example.com'],
    ['two dots in a row', 'ja..ne@example.com'],
    ['a dotless domain', 'jane@localhost'],
    ['an empty domain label', 'jane@example..com'],
    ['a trailing dot', 'jane@example.com.'],
    ['a hyphen-edged label', 'jane@-example.com'],
    ['an underscore in the domain', 'jane@ex_ample.com'],
    ['a percent-encoded domain', 'jane@exa%6dple.com'],
    ['a numeric IPv4 host', 'jane@127.0.0.1'],
    ['a hex IPv4 host', 'jane@0x7f.1'],
    ['an address literal', 'jane@[127.0.0.1]'],
    ['a CRLF header injection', 'jane@example.com\r\nBcc: x@evil.com'],
    ['a NUL byte', 'jane@example.com\u0000'],
    ['an over-long local part', `${'a'.repeat(65)}@example.com`],
    ['an over-long address', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}.com`],
    ['an empty string', ''],
    ['a megabyte of input', `${'a'.repeat(1_000_000)}@example.com`],
  ])('rejects %s', (_label, raw) => {
    expect(tryNormalizeEmail(raw)).toBeUndefined();
    const error = errorOf(() => normalizeEmail(raw));
    expect(isLatchkeyError(error, 'invalid_email')).toBe(true);
    expect((error as Error).message).toBe('Enter a valid email address.');
    expect((error as { param?: string }).param).toBe('email');
  });
});

describe('validateEmail', () => {
  it('normalizes a string', () => {
    expect(validateEmail('Jane@Example.com')).toBe('jane@example.com');
  });

  it.each([[null], [undefined], [42], [['jane@example.com']], [{ $ne: '' }]])('refuses a non-string (%j)', (raw) => {
    expect(isLatchkeyError(errorOf(() => validateEmail(raw)), 'invalid_email')).toBe(true);
  });
});
