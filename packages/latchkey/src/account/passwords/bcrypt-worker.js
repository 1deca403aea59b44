// @ts-check
/**
 * The Piscina worker that runs bcrypt off the event loop. bcryptjs is pure JavaScript: one hash
 * at 12 rounds keeps a thread busy for a quarter of a second, which on the main thread would
 * stall every other request.
 *
 * This file is plain ESM JavaScript, not TypeScript, so that a worker thread can load it under
 * plain Node, tsx and vitest alike without a TypeScript loader.
 */
import { threadId } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

/**
 * @typedef {object} BcryptTask
 * @property {string} secret What bcrypt hashes: for bcrypt_sha256, the hex SHA-256 of the password.
 * @property {string | number} salt A bcrypt string (`$2b$12$...`; its salt part is used, so a
 *   stored hash can be passed as is to recompute it), or a number of rounds for a fresh salt.
 */

/**
 * @typedef {object} BcryptResult
 * @property {string} bcrypt The bcrypt string (`$2b$<rounds>$<salt><digest>`).
 * @property {number} threadId The thread that computed it, so that tests can check it was not the
 *   main thread.
 */

/**
 * @param {BcryptTask} task
 * @returns {BcryptResult}
 */
export default function bcryptHash(task) {
  return { bcrypt: bcrypt.hashSync(task.secret, task.salt), threadId };
}
