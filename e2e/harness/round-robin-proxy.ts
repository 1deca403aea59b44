/**
 * A small HTTP reverse proxy on loopback that hands each request to the next of its upstreams in
 * turn, as nginx's or Caddy's round-robin balancing does in front of several instances of a site.
 * Per request, not per connection: a client that keeps its connection open still meets every
 * instance, so nothing a test sees can come from one instance remembering it.
 *
 * Like a deployed proxy it appends the client's address to X-Forwarded-For (the site trusts one
 * hop, LATCHKEY_TRUST_PROXY_HOPS=1) and keeps the Host header, so per-IP rate limits count the
 * real client and the allowed-hosts check sees the name the client used.
 *
 * A request may name its upstream in `X-Upstream: <index>`, which the proxy removes before
 * forwarding: what a test uses to say "this step on the other instance", as a sticky-session
 * cookie would pin it behind a real balancer. Every answer says in `X-Upstream` which instance
 * gave it, so a test can check that a step ran where it meant it to.
 */
import { Agent, createServer, request as forward, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const UPSTREAM_HEADER = 'x-upstream';

/** Hop-by-hop headers (RFC 9110 section 7.6.1): they describe one connection and are never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export interface RoundRobinProxy {
  /** `http://127.0.0.1:PORT`: the one address clients use (and the site's SITE_URL). */
  url: string;
  /** Sets the instances, as `http://host:port` URLs; requests before this answer 503. */
  setUpstreams(urls: string[]): void;
  /** How many requests each upstream has been handed, by index. */
  served(): number[];
  close(): Promise<void>;
}

function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  // A Connection header may name further headers that are hop-by-hop for this connection only.
  const named = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.includes(name)));
}

function refuse(reply: ServerResponse, status: number, message: string): void {
  if (reply.headersSent) {
    reply.destroy();
    return;
  }
  reply.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(`${message}\n`);
}

export async function startRoundRobinProxy(): Promise<RoundRobinProxy> {
  let upstreams: URL[] = [];
  let next = 0;
  const counts: number[] = [];
  // Connections to the instances are kept open and reused, as nginx's upstream keepalive does.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });

  const pick = (request: IncomingMessage): number | string => {
    const pinned = request.headers[UPSTREAM_HEADER];
    if (pinned === undefined) return next++ % upstreams.length;
    const index = Number(pinned);
    return Number.isInteger(index) && index >= 0 && index < upstreams.length ? index : `No upstream ${String(pinned)}: there are ${upstreams.length}.`;
  };

  const server = createServer((request, reply) => {
    if (upstreams.length === 0) return refuse(reply, 503, 'The proxy has no upstream yet.');
    const index = pick(request);
    if (typeof index === 'string') return refuse(reply, 400, index);
    counts[index] = (counts[index] ?? 0) + 1;
    const upstream = upstreams[index]!;
    const headers = withoutHopByHop(request.headers);
    delete headers[UPSTREAM_HEADER];
    const client = request.socket.remoteAddress ?? '';
    headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${String(headers['x-forwarded-for'])}, ${client}` : client;

    const outgoing = forward({ host: upstream.hostname, port: upstream.port, method: request.method, path: request.url, headers, agent }, (answer) => {
      const answerHeaders = withoutHopByHop(answer.headers);
      answerHeaders[UPSTREAM_HEADER] = String(index);
      reply.writeHead(answer.statusCode ?? 502, answerHeaders);
      answer.pipe(reply);
      answer.on('error', () => reply.destroy());
    });
    outgoing.on('error', (error) => refuse(reply, 502, `Upstream ${index} failed: ${error.message}`));
    // A client that goes away takes its request to the instance with it.
    reply.on('close', () => {
      if (!reply.writableFinished) outgoing.destroy();
    });
    request.pipe(outgoing);
  });
  // Long enough for the slowest journey step; a stuck upstream is the test's failure, not the proxy's.
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setUpstreams(urls) {
      upstreams = urls.map((url) => new URL(url));
      counts.splice(0, counts.length, ...upstreams.map(() => 0));
    },
    served: () => [...counts],
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
