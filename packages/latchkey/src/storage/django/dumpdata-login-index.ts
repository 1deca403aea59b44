/**
 * Users' ids by login (username, or email when the model has none), for the references by natural
 * key `--natural-foreign` writes. A Map of a million logins added 240 MB to a 1,000,000-user
 * dump's peak (every login a string on V8's heap, and the Map's tables copied as it grew, with
 * the collector's headroom on top); this index keeps them outside the heap: the logins as bytes,
 * ids and hashes in typed arrays, and a table of slots (open addressing) pointing at them.
 * It answers as a Map would, the last user of a login winning.
 */
import { NumberChunks, TextColumn } from './dumpdata-row-table.js';

const INITIAL_SLOTS = 1 << 10;
/** A slot's value when it points at no entry; otherwise the entry's index + 1. */
const EMPTY = 0;

/** FNV-1a over the login's UTF-16 code units: fast, and spread well enough for a table at most half full. */
function hashOf(login: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < login.length; index++) hash = Math.imul(hash ^ login.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}

export class LoginIndex {
  private readonly logins = new TextColumn();
  private readonly ids = new NumberChunks((length) => new Float64Array(length));
  /** Each entry's hash, so that growing never reads a login back and a probe compares text only when the hashes match. */
  private readonly hashes = new NumberChunks((length) => new Uint32Array(length));
  private entries = 0;
  /** How many slots point at an entry: kept under half of them, so that probes stay short. */
  private slotsUsed = 0;
  private slots = new Uint32Array(INITIAL_SLOTS);

  set(login: string, id: number): void {
    const hash = hashOf(login);
    const slot = this.slotOf(login, hash);
    // A login seen again is a new entry the slot now points at; the old one is never read again.
    const isNew = this.slots[slot] === EMPTY;
    this.logins.push(login);
    this.ids.push(id);
    this.hashes.push(hash);
    this.slots[slot] = ++this.entries;
    if (isNew && ++this.slotsUsed * 2 > this.slots.length) this.grow();
  }

  get(login: string): number | undefined {
    const entry = this.slots[this.slotOf(login, hashOf(login))]!;
    return entry === EMPTY ? undefined : this.ids.get(entry - 1);
  }

  /** The slot that points at the login's entry, or the empty slot where it would go. */
  private slotOf(login: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === EMPTY || (this.hashes.get(entry - 1) === hash && this.logins.get(entry - 1) === login)) return slot;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    const mask = this.slots.length - 1;
    for (const entry of old) {
      if (entry === EMPTY) continue;
      let slot = this.hashes.get(entry - 1) & mask;
      while (this.slots[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.slots[slot] = entry;
    }
  }
}
