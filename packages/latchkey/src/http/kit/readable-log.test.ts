/**
 * The local log's layout of records that a Fastify app does not make in the usual order: whatever
 * arrives, each record is one line (or a line and its stack), and nothing is lost.
 */
import { describe, expect, it } from 'vitest';
import { createReadableLogStream } from './readable-log.js';

function readable(): { write: (line: string) => void; text: () => string } {
  let text = '';
  const stream = createReadableLogStream({ write: (chunk: string) => (text += chunk) });
  return { write: (line) => stream.write(line), text: () => text };
}

const at = new Date(2026, 11, 2, 9, 5, 7).getTime();

describe('the readable log stream', () => {
  it('writes a request completed without its incoming line by its request id', () => {
    const log = readable();
    log.write(`${JSON.stringify({ level: 30, time: at, reqId: 'req-7', res: { statusCode: 204 }, responseTime: 3.6, msg: 'request completed' })}\n`);
    expect(log.text()).toBe('09:05:07 request req-7 204 4ms\n');
  });

  it('reads several records in one write, and passes on text that is not a record as it came', () => {
    const log = readable();
    const incoming = { level: 30, time: at, reqId: 1, req: { method: 'GET', url: '/a/' }, msg: 'incoming request' };
    const completed = { level: 30, time: at, reqId: 1, res: { statusCode: 200 }, responseTime: 12.2, msg: 'request completed' };
    log.write(`${JSON.stringify(incoming)}\n${JSON.stringify(completed)}\nplain words\n[1,2]\n`);
    expect(log.text()).toBe('09:05:07 GET /a/ 200 12ms\nplain words\n[1,2]\n');
  });

  it('shows a message the project logs with its own fields, and its level when it is not info', () => {
    const log = readable();
    log.write(`${JSON.stringify({ level: 30, time: at, pid: 1, hostname: 'h', msg: 'outbox sent', mails: 2 })}\n`);
    log.write(`${JSON.stringify({ level: 20, time: at, msg: 'details' })}\n`);
    log.write(`${JSON.stringify({ level: 60, time: at, err: { type: 'Error', message: 'disk full', stack: 'Error: disk full\n    at write (x.js:1:1)' } })}\n`);
    expect(log.text()).toBe('09:05:07 outbox sent {"mails":2}\n09:05:07 DEBUG details\n09:05:07 FATAL disk full\n    Error: disk full\n    at write (x.js:1:1)\n');
  });
});
