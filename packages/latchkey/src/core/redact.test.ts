import { describe, expect, it } from 'vitest';
import { maskUrlCredentials } from './redact.js';

describe('maskUrlCredentials', () => {
  it('hides the password of well-formed and malformed URLs, and password parameters', () => {
    expect(maskUrlCredentials('postgres://app:s3cret@db:5432/app')).toBe('postgres://app:***@db:5432/app');
    expect(maskUrlCredentials('smtp://user:p@ss:w0rd@mail:25')).toBe('smtp://user:***@mail:25');
    expect(maskUrlCredentials('postgres://db/app?user=x&password=s3cret&sslmode=require')).toBe('postgres://db/app?user=x&password=***&sslmode=require');
    expect(maskUrlCredentials('mysql://root:s3cret@[bad')).toBe('mysql://root:***@[bad');
  });

  it('leaves URLs without credentials alone', () => {
    for (const value of ['sqlite:./db.sqlite3', 'console:', 'smtp://mail:25', 'postgres://app@db/app']) {
      expect(maskUrlCredentials(value)).toBe(value);
    }
  });
});
