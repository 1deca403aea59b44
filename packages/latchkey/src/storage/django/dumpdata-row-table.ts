/**
 * A dump's rows of one kind, kept from the moment they are read until the import asks for them,
 * in a fraction of the memory the row objects would take. A million users with their addresses,
 * as objects, are about 600 MB of V8's heap (a Date alone takes some 120 bytes), and V8 lets its
 * heap grow to two or three times what is live between collections: a 1,000,000-user dump peaked
 * at 1.5 GB. Here each field is a column: numbers and instants in Float64Arrays, booleans in
 * Uint8Arrays, text as bytes in Buffers, in chunks of a fixed size. That memory is outside the
 * heap, which the collector neither scans nor grows ahead, and growing never copies it. Rows are
 * made again a batch at a time, as they are handed out: equal to the rows pushed, with the same
 * fields in the same order (new Date objects of the same instants).
 */

type ColumnKind = 'number' | 'instant' | 'boolean' | 'text' | 'json' | 'jsonText';

/** How a field is kept: chosen by its type, so that a layout cannot keep a field as what it is not. */
type ColumnKindOf<T> = [T] extends [boolean]
  ? 'boolean'
  : [T] extends [number | null]
    ? 'number'
    : [T] extends [Date | null]
      ? 'instant'
      : [T] extends [string | null]
        ? 'text'
        : 'json' | 'jsonText';

/** Each field of a row and how it is kept, in the order the fields of a row made again are in. */
export type RowLayout<Row> = { readonly [F in keyof Row]-?: ColumnKindOf<Row[F]> };

interface Column {
  push(value: unknown): void;
  get(index: number): unknown;
}

const CHUNK_BITS = 14;
const CHUNK_LENGTH = 1 << CHUNK_BITS;
const INDEX_IN_CHUNK = CHUNK_LENGTH - 1;

/** Numbers in typed arrays of a fixed length, added as needed: growing never copies (nor holds twice) what is kept. */
export class NumberChunks<Chunk extends Float64Array | Int32Array | Uint32Array | Uint8Array> {
  private readonly chunks: Chunk[] = [];
  private length = 0;

  constructor(private readonly newChunk: (length: number) => Chunk) {}

  push(value: number): void {
    if ((this.length & INDEX_IN_CHUNK) === 0) this.chunks.push(this.newChunk(CHUNK_LENGTH));
    this.chunks[this.length >>> CHUNK_BITS]![this.length & INDEX_IN_CHUNK] = value;
    this.length++;
  }

  get(index: number): number {
    return this.chunks[index >>> CHUNK_BITS]![index & INDEX_IN_CHUNK]!;
  }
}

/** Ids (safe integers, which a double holds exactly) and null, as NaN: no id is NaN. */
class NumberColumn implements Column {
  private readonly values = new NumberChunks((length) => new Float64Array(length));
  push(value: unknown): void {
    this.values.push(value === null ? NaN : (value as number));
  }
  get(index: number): number | null {
    const value = this.values.get(index);
    return Number.isNaN(value) ? null : value;
  }
}

/** Instants as milliseconds since the epoch (a Date's whole value) and null, as NaN: a row's Date is never invalid. */
class InstantColumn implements Column {
  private readonly times = new NumberChunks((length) => new Float64Array(length));
  push(value: unknown): void {
    this.times.push(value === null ? NaN : (value as Date).getTime());
  }
  get(index: number): Date | null {
    const time = this.times.get(index);
    return Number.isNaN(time) ? null : new Date(time);
  }
}

class BooleanColumn implements Column {
  private readonly values = new NumberChunks((length) => new Uint8Array(length));
  push(value: unknown): void {
    this.values.push(value === true ? 1 : 0);
  }
  get(index: number): boolean {
    return this.values.get(index) === 1;
  }
}

const TEXT_BUFFER_BYTES = 1 << 20;
const BEYOND_LATIN1 = /[\u0100-\uffff]/;
/** A text's length in bytes, doubled, plus 1 when it is kept as UTF-16; NULL_TEXT for null. */
const NULL_TEXT = -1;

/**
 * Text as Latin-1 (a byte a character: hashes, keys, most names and addresses) or, when a
 * character is beyond it, UTF-16: either is read back as the very same string, lone surrogates
 * included, where UTF-8 would replace them.
 */
export class TextColumn implements Column {
  private readonly buffers: Buffer[] = [];
  private bytesUsed = 0;
  private readonly bufferIndexes = new NumberChunks((length) => new Uint32Array(length));
  private readonly offsets = new NumberChunks((length) => new Uint32Array(length));
  private readonly lengths = new NumberChunks((length) => new Int32Array(length));

  push(value: unknown): void {
    if (value === null) {
      this.bufferIndexes.push(0);
      this.offsets.push(0);
      this.lengths.push(NULL_TEXT);
      return;
    }
    const text = value as string;
    const utf16 = BEYOND_LATIN1.test(text);
    const bytes = utf16 ? text.length * 2 : text.length;
    let buffer = this.buffers.at(-1);
    if (buffer === undefined || this.bytesUsed + bytes > buffer.length) {
      // A text longer than a buffer (a long OAuth token, say) gets one of its own.
      buffer = Buffer.alloc(Math.max(bytes, TEXT_BUFFER_BYTES));
      this.buffers.push(buffer);
      this.bytesUsed = 0;
    }
    buffer.write(text, this.bytesUsed, utf16 ? 'utf16le' : 'latin1');
    this.bufferIndexes.push(this.buffers.length - 1);
    this.offsets.push(this.bytesUsed);
    this.lengths.push(bytes * 2 + (utf16 ? 1 : 0));
    this.bytesUsed += bytes;
  }

  get(index: number): string | null {
    const length = this.lengths.get(index);
    if (length === NULL_TEXT) return null;
    const start = this.offsets.get(index);
    return this.buffers[this.bufferIndexes.get(index)]!.toString(length % 2 === 1 ? 'utf16le' : 'latin1', start, start + (length >>> 1));
  }
}

/** JSON columns (authenticators' data, apps' settings, accounts' extra data) as they were parsed: few, and of any shape. */
class JsonColumn implements Column {
  private readonly values: unknown[] = [];
  push(value: unknown): void {
    this.values.push(value);
  }
  get(index: number): unknown {
    return this.values[index];
  }
}

/**
 * JSON values every row has (a user's project columns, docs/user-fields.md): kept as their JSON
 * text, outside the heap like any text, and parsed again as each row is made.
 */
class JsonTextColumn implements Column {
  private readonly texts = new TextColumn();
  push(value: unknown): void {
    this.texts.push(value === undefined ? null : JSON.stringify(value));
  }
  get(index: number): unknown {
    const text = this.texts.get(index);
    return text === null ? undefined : JSON.parse(text);
  }
}

const COLUMNS: Record<ColumnKind, () => Column> = {
  number: () => new NumberColumn(),
  instant: () => new InstantColumn(),
  boolean: () => new BooleanColumn(),
  text: () => new TextColumn(),
  json: () => new JsonColumn(),
  jsonText: () => new JsonTextColumn(),
};

/** Ids as numbers, token keys as text (by code unit, as SQLite and a C collation order them). */
function compareKeys(left: unknown, right: unknown): number {
  const [a, b] = [left as number | string, right as number | string];
  return a < b ? -1 : a > b ? 1 : 0;
}

export class RowTable<Row extends object> {
  private readonly columns: { field: string; column: Column }[];
  private count = 0;
  /** The rows' indexes in key order, once sortBy has found them out of it; null while pushed order is key order. */
  private order: Uint32Array | null = null;

  constructor(layout: RowLayout<Row>) {
    this.columns = Object.entries(layout).map(([field, kind]) => ({ field, column: COLUMNS[kind as ColumnKind]() }));
  }

  get length(): number {
    return this.count;
  }

  push(row: Row): void {
    const values = row as Record<string, unknown>;
    for (const { field, column } of this.columns) column.push(values[field]);
    this.count++;
    this.order = null;
  }

  /** Puts the rows in the order of a field's values, rows of equal values as they were pushed. */
  sortBy(field: keyof Row & string): void {
    const { column } = this.columns.find((candidate) => candidate.field === field)!;
    let sorted = true;
    // A dump from dumpdata is in primary-key order already: checking costs less than sorting.
    for (let index = 1; index < this.count && sorted; index++) sorted = compareKeys(column.get(index - 1), column.get(index)) <= 0;
    this.order = null;
    if (sorted) return;
    const keys = Array.from({ length: this.count }, (_, index) => column.get(index));
    this.order = new Uint32Array(this.count).map((_, index) => index).sort((a, b) => compareKeys(keys[a], keys[b]) || a - b);
  }

  /** The rows from `start` to `end` (excluded), in key order once sorted, made again. */
  slice(start: number, end: number): Row[] {
    const rows: Row[] = [];
    for (let position = start; position < Math.min(end, this.count); position++) {
      const index = this.order === null ? position : this.order[position]!;
      const row: Record<string, unknown> = {};
      for (const { field, column } of this.columns) row[field] = column.get(index);
      rows.push(row as Row);
    }
    return rows;
  }
}
