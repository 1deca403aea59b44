/**
 * The integer id a client is shown for each session (the headless contract's `id`). Stored
 * sessions have no integer key: they are keyed by the SHA-256 of their secret id
 * (session-service.ts). The first 48 bits of that hash make a stable id that fits a JSON number
 * exactly (a safe integer) and gives away nothing usable: the hash is of a 256-bit random value,
 * and even the whole hash cannot be turned back into the id that authenticates. Two of one user's
 * sessions sharing 48 bits is a 2^-48 event; it would only mean that ending one ends both.
 */
export function publicSessionId(idHash: string): number {
  return Number.parseInt(idHash.slice(0, 12), 16);
}
