import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../core/errors.js';
import { maskUrlCredentials } from '../core/redact.js';
import { parseEmailUrl } from './email-url.js';

function configurationError(value: string): string {
  try {
    parseEmailUrl(value);
  } catch (error) {
    if (isLatchkeyError(error, 'configuration_invalid')) return error.message;
    throw error;
  }
  throw new Error(`EMAIL_URL=${value} was accepted`);
}

describe('parseEmailUrl', () => {
  it('reads smtp:// with host and port, without credentials', () => {
    expect(parseEmailUrl('smtp://mail.example.com:587')).toEqual({
      backend: 'smtp',
      host: 'mail.example.com',
      port: 587,
      implicitTls: false,
    });
  });

  it('reads smtps:// as implicit TLS and URL-decodes the credentials', () => {
    expect(parseEmailUrl('smtps://apikey%40example.com:p%40ss%3Aw%2Frd%20%C3%A9@smtp.example.com:465')).toEqual({
      backend: 'smtp',
      host: 'smtp.example.com',
      port: 465,
      implicitTls: true,
      user: 'apikey@example.com',
      password: 'p@ss:w/rd é',
    });
  });

  it('defaults the port to 25 for smtp:// and 465 for smtps://', () => {
    expect(parseEmailUrl('smtp://localhost')).toMatchObject({ port: 25 });
    expect(parseEmailUrl('smtps://localhost/')).toMatchObject({ port: 465 });
  });

  it('unbrackets an IPv6 host', () => {
    expect(parseEmailUrl('smtp://[::1]:2525')).toMatchObject({ host: '::1', port: 2525 });
  });

  it('reads console: and memory:', () => {
    expect(parseEmailUrl('console:')).toEqual({ backend: 'console' });
    expect(parseEmailUrl('memory:')).toEqual({ backend: 'memory' });
  });

  it.each([
    ['ftp://user:hunter22@files.example.com:21', 'unsupported scheme'],
    ['', 'not a URL'],
    ['garbage', 'not a URL'],
    ['smtp://user:hunter22@', 'not a URL'],
    ['smtp://user:hunter22@mail.example.com:587/inbox', 'no path'],
    ['smtp://user:hunter22@mail.example.com:587?tls_reject_unauthorized=false', 'query'],
    ['smtp://user:hunter22%ZZ@mail.example.com:587', 'URL-encoded'],
    ['console:please', 'nothing after the colon'],
  ])('refuses %j, naming EMAIL_URL and masking the password', (value, reason) => {
    const message = configurationError(value);
    expect(message).toMatch(/^EMAIL_URL=/);
    expect(message).toContain(reason);
    expect(message).toContain('smtp://[user:pass@]host:port');
    expect(message).not.toContain('hunter22');
    expect(message).not.toContain('\n');
  });

  it('shows the masked value in the message', () => {
    expect(configurationError('ftp://user:hunter22@files.example.com')).toContain('"ftp://user:***@files.example.com"');
    expect(configurationError('')).toContain('EMAIL_URL=""');
  });
});

describe('maskUrlCredentials on EMAIL_URL values', () => {
  it.each([
    ['smtp://user:secret@host:25', 'smtp://user:***@host:25'],
    ['smtp://user:se@cr:et@host:25', 'smtp://user:***@host:25'],
    ['smtp://user:se/cr#et@host', 'smtp://user:***@host'],
    ['smtp://:secret@host', 'smtp://:***@host'],
    ['smtp://user@host:25', 'smtp://user@host:25'],
    ['smtp://host:25', 'smtp://host:25'],
    ['console:', 'console:'],
    ['user:secret@host', 'user:secret@host'],
  ])('%s -> %s', (value, masked) => {
    expect(maskUrlCredentials(value)).toBe(masked);
  });
});
