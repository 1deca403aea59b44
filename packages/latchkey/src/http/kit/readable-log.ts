/**
 * The log as a developer reads it in local mode: one short line per request (`14:02:07 GET
 * /accounts/login/ 200 12ms`), warnings and errors marked, instead of pino's two JSON lines per
 * request. Between those lines the console mailer's mails stay readable (EMAIL_URL=console:).
 * Production keeps pino's JSON lines, which log services parse.
 *
 * It is a destination stream: pino has already serialised each record through loggerOptions()
 * (logger-options.ts), so what arrives here is redacted the same as the JSON lines; this only
 * rearranges it. Written here rather than taken from pino-pretty: a few dozen lines, no
 * dependency, and pino-pretty's default still spends two lines per request.
 */

/** Where the readable lines go: the terminal (`process.stdout`) or, in a test, anything that takes text. */
export interface LogOutput {
  /** Writes text as given: the lines are already laid out, each ending with a newline. */
  write(text: string): unknown;
  /** True for a terminal, which alone gets colours (process.stdout has it). */
  isTTY?: boolean;
}

/** What pino hands a destination: one JSON record per write, ending with a newline. */
export interface LogDestination {
  /** Takes one serialised record (or several, newline-separated) and writes it out. */
  write(line: string): void;
}

interface LogRecord {
  level?: number;
  time?: number;
  msg?: string;
  reqId?: string | number;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
  err?: { type?: string; message?: string; stack?: string };
  [field: string]: unknown;
}

/** Fields every record has or that the line shows in its own way; the others are appended as JSON. */
const SHOWN_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'req', 'res', 'responseTime', 'err']);
const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Requests whose completion has not been logged yet; a request that never completes is forgotten past this many. */
const MAX_PENDING_REQUESTS = 1000;

const COLOURS = { red: '\x1b[31m', yellow: '\x1b[33m', dim: '\x1b[2m', reset: '\x1b[0m' } as const;
type Colour = keyof typeof COLOURS;

/** Local time of day, as a developer's terminal clock shows it. */
function clock(time: number | undefined): string {
  const date = time === undefined ? new Date() : new Date(time);
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((part) => String(part).padStart(2, '0')).join(':');
}

function colourOfStatus(status: number): Colour | undefined {
  if (status >= 500) return 'red';
  if (status >= 400) return 'yellow';
  return undefined;
}

function colourOfLevel(level: number): Colour | undefined {
  if (level >= 50) return 'red';
  if (level >= 40) return 'yellow';
  if (level < 30) return 'dim';
  return undefined;
}

function parseRecord(line: string): LogRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as LogRecord) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A destination for pino that writes readable lines to `output`. Colours are used on a terminal
 * only, so that a redirected log stays plain text.
 */
export function createReadableLogStream(output: LogOutput): LogDestination {
  const paint = (colour: Colour | undefined, text: string): string => (colour === undefined || output.isTTY !== true ? text : `${COLOURS[colour]}${text}${COLOURS.reset}`);
  // Fastify logs a request twice: `incoming request` with its method and URL, then `request
  // completed` with the status and time. One line is written, at completion, from both.
  const pending = new Map<string | number, string>();

  const format = (record: LogRecord): string | undefined => {
    const level = record.level ?? 30;
    if (record.msg === 'incoming request' && record.req !== undefined && record.reqId !== undefined) {
      pending.set(record.reqId, `${record.req.method ?? '?'} ${record.req.url ?? '?'}`);
      if (pending.size > MAX_PENDING_REQUESTS) pending.delete(pending.keys().next().value!);
      return undefined;
    }
    if (record.msg === 'request completed' && record.res !== undefined) {
      const request = (record.reqId !== undefined ? pending.get(record.reqId) : undefined) ?? `request ${String(record.reqId ?? '?')}`;
      if (record.reqId !== undefined) pending.delete(record.reqId);
      const status = record.res.statusCode ?? 0;
      const took = record.responseTime === undefined ? '' : ` ${Math.round(record.responseTime)}ms`;
      return `${clock(record.time)} ${request} ${paint(colourOfStatus(status), String(status))}${took}`;
    }
    const label = LEVELS[level];
    const extra = Object.fromEntries(Object.entries(record).filter(([field]) => !SHOWN_FIELDS.has(field)));
    const lines = [
      `${clock(record.time)} ${label === undefined ? '' : `${paint(colourOfLevel(level), label)} `}${record.msg ?? record.err?.message ?? ''}${Object.keys(extra).length > 0 ? ` ${JSON.stringify(extra)}` : ''}`,
    ];
    // An error's stack (redacted by the err serializer), indented under its line.
    if (record.err?.stack) lines.push(...record.err.stack.split('\n').map((line) => `    ${line.trim()}`));
    return lines.join('\n');
  };

  return {
    write(chunk: string): void {
      for (const line of chunk.split('\n')) {
        if (line.trim() === '') continue;
        const record = parseRecord(line);
        if (record === undefined) {
          // Not pino's: passed on as it came.
          output.write(`${line}\n`);
          continue;
        }
        const text = format(record);
        if (text !== undefined) output.write(`${text}\n`);
      }
    },
  };
}
