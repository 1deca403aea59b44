import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closedLocalPort } from '../testing/shared-stores.js';
import { isServiceOutage } from './outage.js';

/** A real refusal from Node: connecting to a port nothing listens on. */
async function refusedConnection(): Promise<Error> {
  const port = await closedLocalPort();
  return new Promise((resolve) => connect(port, '127.0.0.1').once('error', resolve));
}

/** An error as node-postgres reports one from the server: its SQLSTATE in `code`. */
function serverError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('isServiceOutage', () => {
  it('recognises a connection refused, also when wrapped', async () => {
    const refused = await refusedConnection();
    expect(isServiceOutage(refused)).toBe(true);
    expect(isServiceOutage(new Error('query failed', { cause: refused }))).toBe(true);
  });

  it('recognises a server shutting down and the driver losing or not getting a connection', () => {
    expect(isServiceOutage(serverError('57P01', 'terminating connection due to administrator command'))).toBe(true);
    expect(isServiceOutage(serverError('57P03', 'the database system is starting up'))).toBe(true);
    expect(isServiceOutage(serverError('08006', 'connection failure'))).toBe(true);
    expect(isServiceOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isServiceOutage(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('leaves a defect a defect: a bad statement, a broken constraint, a plain error, a non-error', () => {
    expect(isServiceOutage(serverError('42601', 'syntax error at or near "selec"'))).toBe(false);
    expect(isServiceOutage(serverError('23505', 'duplicate key value violates unique constraint'))).toBe(false);
    expect(isServiceOutage(new TypeError("Cannot read properties of undefined (reading 'id')"))).toBe(false);
    expect(isServiceOutage('ECONNREFUSED')).toBe(false);
  });
});
