/**
 * DATABASE_URL: `sqlite:PATH` (relative to the working directory, or absolute), `sqlite::memory:`,
 * or `postgres://user:password@host:port/database` (also `postgresql://`). Every message that shows
 * the URL masks its password first (maskUrlCredentials), because start-up errors end up in logs and
 * terminals.
 */
import { resolve } from 'node:path';
import { LatchkeyError } from '../core/errors.js';
import { maskUrlCredentials } from '../core/redact.js';

export type DatabaseLocation =
  | { dialect: 'sqlite'; /** ':memory:' or an absolute path. */ filename: string }
  | { dialect: 'postgres'; connectionString: string; /** host:port, for messages. */ address: string };

const ALLOWED_FORMS =
  'use sqlite:PATH (a file path, relative to the working directory or absolute), sqlite::memory:, or postgres://user:password@host:port/database';

function invalidUrl(url: string, reason: string): LatchkeyError {
  return new LatchkeyError('configuration_invalid', `DATABASE_URL='${maskUrlCredentials(url)}' ${reason}; ${ALLOWED_FORMS}.`);
}

export function parseDatabaseUrl(url: string, workingDirectory: string = process.cwd()): DatabaseLocation {
  if (url === 'sqlite::memory:') {
    return { dialect: 'sqlite', filename: ':memory:' };
  }
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    // 'sqlite://x' would otherwise silently become the absolute path '/x': a database created in
    // the file system root instead of the project. The URL-style forms are refused, not guessed.
    if (path === '' || path.startsWith('//')) {
      throw invalidUrl(url, 'is not a SQLite file path');
    }
    return { dialect: 'sqlite', filename: resolve(workingDirectory, path) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidUrl(url, 'is not a valid URL');
    }
    const host = parsed.hostname === '' ? (parsed.searchParams.get('host') ?? 'localhost') : parsed.hostname;
    return { dialect: 'postgres', connectionString: url, address: `${host}:${parsed.port === '' ? '5432' : parsed.port}` };
  }
  throw invalidUrl(url, 'is not a supported database URL');
}
