/**
 * A TCP proxy of the test's own between the application and a shared server (the machine's
 * PostgreSQL): cutting it is, as far as the application can tell, the server restarting (every
 * connection dropped, new ones refused until it is restored), without touching the server that
 * other test files and CI are using. It can also hold one connection's traffic at a chosen
 * statement, so that the cut lands in the middle of a transaction.
 */
import { createServer, Socket, type Server } from 'node:net';

export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private hold: { match: (chunk: Buffer) => boolean; reached: () => void } | undefined;

  /** Where the application connects instead of the server. */
  port = 0;

  private constructor(private readonly target: { host: string; port: number }) {}

  /** Starts listening on a free port of 127.0.0.1, forwarding to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    proxy.port = await proxy.listen(0);
    return proxy;
  }

  private listen(port: number): Promise<number> {
    const server = createServer((client) => this.forward(client));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        resolve(typeof address === 'object' && address !== null ? address.port : port);
      });
    });
  }

  private forward(client: Socket): void {
    const upstream = new Socket();
    this.sockets.add(client).add(upstream);
    let held = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.connect(this.target.port, this.target.host);
    client.on('data', (chunk: Buffer) => {
      if (!held && this.hold !== undefined && this.hold.match(chunk)) {
        held = true;
        this.hold.reached();
        this.hold = undefined;
      }
      // From the matching chunk on, nothing this client sends reaches the server.
      if (!held) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
  }

  /**
   * From the first chunk a client sends that `match`es, that client's traffic stops reaching the
   * server (its statement is left waiting). Resolves once such a chunk has arrived.
   */
  holdWhen(match: (chunk: Buffer) => boolean): Promise<void> {
    return new Promise((resolve) => {
      this.hold = { match, reached: resolve };
    });
  }

  /** Drops every connection and refuses new ones, until restore(). */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.hold = undefined;
    const closed = server === undefined ? Promise.resolve() : new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.server === undefined) await this.listen(this.port);
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
