import { describe, expect, it } from 'vitest';
import { matchTotpCode, newTotpSecret, totpCode, totpCounter, totpSecretFromBase32, totpSecretToBase32, totpUri, type TotpParameters } from './totp.js';

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

/** RFC 6238 Appendix B: the seeds of each hash function and the 8-digit codes at each time. */
const SEEDS = {
  SHA1: ascii('12345678901234567890'),
  SHA256: ascii('12345678901234567890123456789012'),
  SHA512: ascii('1234567890123456789012345678901234567890123456789012345678901234'),
} as const;
const VECTORS: [seconds: number, sha1: string, sha256: string, sha512: string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

const SIX_DIGITS: TotpParameters = { period: 30, digits: 6, tolerance: 0 };

describe('TOTP (RFC 6238)', () => {
  it.each(VECTORS)('matches the RFC 6238 test vectors at T=%i', (seconds, sha1, sha256, sha512) => {
    const at = new Date(seconds * 1000);
    const eight = { period: 30, digits: 8, tolerance: 0 };
    expect(totpCode(SEEDS.SHA1, at, { ...eight, algorithm: 'SHA1' })).toBe(sha1);
    expect(totpCode(SEEDS.SHA256, at, { ...eight, algorithm: 'SHA256' })).toBe(sha256);
    expect(totpCode(SEEDS.SHA512, at, { ...eight, algorithm: 'SHA512' })).toBe(sha512);
    // The vectors' time steps (RFC 6238 Appendix B, column T in hex).
    expect(totpCounter(at, 30)).toBe(Math.floor(seconds / 30));
  });

  it('gives 6 digits by default parameters, the last 6 of the RFC value (RFC 4226 truncation mod 10^6)', () => {
    expect(totpCode(SEEDS.SHA1, new Date(59_000), SIX_DIGITS)).toBe('287082');
  });

  it('matches a code only within its step unless a tolerance is set, and says which step', () => {
    const at = new Date(1111111111_000);
    const code = totpCode(SEEDS.SHA1, at, SIX_DIGITS);
    expect(matchTotpCode(SEEDS.SHA1, code, at, SIX_DIGITS)).toBe(totpCounter(at, 30));
    const nextStep = new Date(at.getTime() + 30_000);
    const previousStep = new Date(at.getTime() - 30_000);
    expect(matchTotpCode(SEEDS.SHA1, code, nextStep, SIX_DIGITS)).toBeUndefined();
    expect(matchTotpCode(SEEDS.SHA1, code, previousStep, SIX_DIGITS)).toBeUndefined();
    const tolerant = { ...SIX_DIGITS, tolerance: 1 };
    expect(matchTotpCode(SEEDS.SHA1, code, nextStep, tolerant)).toBe(totpCounter(at, 30));
    expect(matchTotpCode(SEEDS.SHA1, code, new Date(at.getTime() + 60_000), tolerant)).toBeUndefined();
  });

  it('refuses anything that is not exactly the digits asked for', () => {
    const at = new Date(59_000);
    for (const code of ['', '28708', '2870820', ' 287082', '287 082', '２８７０８２', 'abcdef']) {
      expect(matchTotpCode(SEEDS.SHA1, code, at, SIX_DIGITS)).toBeUndefined();
    }
  });

  it('makes 20-byte random secrets and a URI apps can read', () => {
    const secret = newTotpSecret();
    expect(secret).toHaveLength(20);
    expect(newTotpSecret()).not.toEqual(secret);
    const base32 = totpSecretToBase32(secret);
    expect(base32).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(totpUri({ secret, issuer: 'Example Site', label: 'alice', parameters: SIX_DIGITS }));
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe('/Example Site:alice');
    expect(Object.fromEntries(uri.searchParams)).toEqual({ issuer: 'Example Site', secret: base32, algorithm: 'SHA1', digits: '6', period: '30' });
  });
});

describe('totpSecretFromBase32', () => {
  // Python's base64.b32encode (RFC 4648 section 10's vectors, and 20 bytes as allauth makes them):
  // python3 -c "import base64; print(base64.b32encode(bytes(range(20))).decode())"
  const VECTORS: [text: string, bytes: string][] = [
    ['MY======', 'f'],
    ['MZXQ====', 'fo'],
    ['MZXW6===', 'foo'],
    ['MZXW6YQ=', 'foob'],
    ['MZXW6YTB', 'fooba'],
    ['MZXW6YTBOI======', 'foobar'],
  ];

  it.each(VECTORS)('decodes %s, with or without its padding, in either case', (text, bytes) => {
    const expected = ascii(bytes);
    expect(totpSecretFromBase32(text)).toEqual(expected);
    expect(totpSecretFromBase32(text.replace(/=+$/, ''))).toEqual(expected);
    expect(totpSecretFromBase32(text.toLowerCase())).toEqual(expected);
  });

  it('decodes the secrets allauth stores and this module writes', () => {
    expect(totpSecretFromBase32('AAAQEAYEAUDAOCAJBIFQYDIOB4IBCEQT')).toEqual(Uint8Array.from({ length: 20 }, (_, index) => index));
    const secret = newTotpSecret();
    expect(totpSecretFromBase32(totpSecretToBase32(secret))).toEqual(secret);
  });

  it('refuses empty text, other characters and lengths no whole number of bytes gives', () => {
    for (const text of ['', '=', '========', 'M', 'MZX', 'MZXW6Y', 'MZXW6YTBO', 'MY=====', 'MY=======', 'MZXW6YTB========', 'M1======', 'MZ XW', ' MZXW6YTB', 'MZXW6YTB\n', 'MZ=XW6YTB', 'MZXW6YTB=']) {
      expect(totpSecretFromBase32(text), JSON.stringify(text)).toBeUndefined();
    }
  });
});
