import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomToken } from '../core/crypto.js';

/**
 * Local mode needs no configuration: the first start generates a secret key and keeps it in
 * `.latchkey/secret-key` (git-ignored, readable only by its owner), so that sessions and signed
 * links survive restarts. Production never comes here: it must be given LATCHKEY_SECRET_KEY.
 */
export function readOrCreateLocalSecretKey(cwd: string): string {
  const directory = join(cwd, '.latchkey');
  const file = join(directory, 'secret-key');
  try {
    const existing = readFileSync(file, 'utf8').trim();
    if (existing.length > 0) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const key = randomToken(48);
  // 'wx' fails if another process created the file meanwhile; then that process's key wins.
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw error;
  }
}
