/**
 * A Redis server of the test's own, on a port of its own, that the test can stop, start again on
 * the same port, or freeze: the faults a project's Redis can have in production, without touching
 * the machine's shared server (REDIS_URL), which other test files are using.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closedLocalPort } from './shared-stores.js';

/** Debian's path; REDIS_SERVER_PATH names another. */
const REDIS_SERVER = process.env.REDIS_SERVER_PATH ?? '/usr/bin/redis-server';

export class TestRedisServer {
  private process: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly password: string,
  ) {}

  /** Starts a server without persistence (nothing survives a stop) that requires `password`. */
  static async start(password: string): Promise<TestRedisServer> {
    const server = new TestRedisServer(await closedLocalPort(), password);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://:${this.password}@127.0.0.1:${this.port}/0`;
  }

  /** Starts the server (again) on its port; resolves once it accepts connections. */
  async restart(): Promise<void> {
    if (this.process !== undefined) throw new Error('The test Redis server is already running.');
    const child = spawn(REDIS_SERVER, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', this.password], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.process = child;
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) resolve();
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`redis-server exited (${code}) before it was ready: ${output}`)));
    });
  }

  /** Stops the server as an operator would (SIGTERM) and resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.process;
    if (child === undefined) return;
    this.process = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // A frozen server must be thawed to hear the signal.
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  }

  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered. */
  freeze(): void {
    this.process?.kill('SIGSTOP');
  }

  thaw(): void {
    this.process?.kill('SIGCONT');
  }
}
