/**
 * The objects of a file holding one JSON array of objects (what `manage.py dumpdata` writes),
 * parsed one at a time as the file is read. A million users make a dump of several hundred
 * megabytes: read whole, it would be one string near V8's limit on string length, and its parse
 * would hold everything twice. Only the object being read is held as text.
 */
import { createReadStream } from 'node:fs';

/** Why the file is not an array of objects (the caller names the file). */
export class NotAJsonArrayError extends Error {}

const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

const isWhitespace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09 || code === 0xfeff;

type Expecting = 'array' | 'object-or-end' | 'object' | 'comma-or-end' | 'nothing';

/**
 * Yields each object of the array in `path`; throws NotAJsonArrayError when the file is anything
 * else. `chunkSize` (bytes read at a time) is for tests of objects split across reads.
 */
export async function* readJsonArrayObjects(path: string, chunkSize = 1 << 20): AsyncGenerator<unknown> {
  let expecting: Expecting = 'array';
  // Inside an object: its text so far (earlier chunks), nesting depth, and string state.
  let parts: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let index = 0;

  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: chunkSize }) as AsyncIterable<string>) {
    let start = depth > 0 ? 0 : -1;
    for (let at = 0; at < chunk.length; at++) {
      const code = chunk.charCodeAt(at);
      if (depth > 0) {
        if (inString) {
          if (escaped) escaped = false;
          else if (code === BACKSLASH) escaped = true;
          else if (code === QUOTE) inString = false;
        } else if (code === QUOTE) inString = true;
        else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
        else if ((code === CLOSE_BRACE || code === CLOSE_BRACKET) && --depth === 0) {
          const text = parts.join('') + chunk.slice(start, at + 1);
          parts = [];
          start = -1;
          try {
            yield JSON.parse(text);
          } catch (error) {
            if (!(error instanceof SyntaxError)) throw error;
            throw new NotAJsonArrayError(`its entry ${index + 1} is not valid JSON (${error.message})`);
          }
          index++;
          expecting = 'comma-or-end';
        }
        continue;
      }
      if (isWhitespace(code)) continue;
      if (expecting === 'array' && code === OPEN_BRACKET) expecting = 'object-or-end';
      else if ((expecting === 'object-or-end' || expecting === 'object') && code === OPEN_BRACE) {
        depth = 1;
        start = at;
      } else if ((expecting === 'object-or-end' || expecting === 'comma-or-end') && code === CLOSE_BRACKET) expecting = 'nothing';
      else if (expecting === 'comma-or-end' && code === COMMA) expecting = 'object';
      else {
        const found = JSON.stringify(chunk.slice(at, at + 20));
        throw new NotAJsonArrayError(expecting === 'array' ? `it does not begin with a JSON array but with ${found}` : `after entry ${index} it has ${found} where an object, ',' or ']' belongs`);
      }
    }
    if (depth > 0) parts.push(chunk.slice(start));
  }
  if (expecting !== 'nothing') throw new NotAJsonArrayError(expecting === 'array' ? 'it is empty' : `it ends after entry ${index}, inside the array`);
}
