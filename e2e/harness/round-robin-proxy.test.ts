/**
 * The proxy the two-instance test and the soak benchmark put in front of the site: it must spread
 * requests in turn, honour a pin, pass on what the site relies on (the client's address, the Host,
 * the body, every Set-Cookie) and fail visibly. Checked against two small real HTTP servers.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRoundRobinProxy, type RoundRobinProxy } from './round-robin-proxy.js';
import { Visitor } from './visitor.js';

/** An upstream that answers with its name and what it was sent, and sets two cookies. */
function echoServer(name: string): Promise<{ server: Server; url: string }> {
  const server = createServer((request, reply) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      reply.setHeader('set-cookie', [`first=${name}; Path=/`, `second=${name}; Path=/; HttpOnly`]);
      reply.setHeader('content-type', 'application/json');
      reply.end(JSON.stringify({ name, method: request.method, url: request.url, body, headers: request.headers }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('the round-robin proxy', () => {
  let proxy: RoundRobinProxy;
  let upstreams: { server: Server; url: string }[];

  beforeAll(async () => {
    upstreams = await Promise.all([echoServer('one'), echoServer('two')]);
    proxy = await startRoundRobinProxy();
    proxy.setUpstreams(upstreams.map((upstream) => upstream.url));
  });
  afterAll(async () => {
    await proxy.close();
    for (const { server } of upstreams) server.closeAllConnections();
    await Promise.all(upstreams.map(({ server }) => new Promise((resolve) => server.close(resolve))));
  });

  it('hands requests to the upstreams in turn, even over one kept-alive connection', async () => {
    const client = new Visitor(proxy.url);
    const names: string[] = [];
    for (let index = 0; index < 4; index++) names.push((await client.send('GET', '/')).json().name as string);
    client.close();
    expect(new Set(names.slice(0, 2))).toEqual(new Set(['one', 'two']));
    expect(names.slice(2)).toEqual(names.slice(0, 2));
  });

  it('sends a pinned request where it is pinned, without the pin, and says who answered', async () => {
    const client = new Visitor(proxy.url);
    for (const on of [1, 1, 0]) {
      const reply = await client.send('GET', '/pinned', { on });
      expect(reply.json().name).toBe(on === 0 ? 'one' : 'two');
      expect(reply.instance).toBe(on);
      expect(reply.json().headers['x-upstream']).toBeUndefined();
    }
    const unknown = await client.send('GET', '/', { headers: { 'x-upstream': '2' } });
    expect(unknown.status).toBe(400);
    client.close();
  });

  it("passes on the client's address after any it was sent, the Host, the body, and every Set-Cookie", async () => {
    const client = new Visitor(proxy.url, '127.0.0.77');
    const reply = await client.send('POST', '/form?x=1', { on: 0, json: { hello: 'world' }, headers: { 'x-forwarded-for': '203.0.113.9' } });
    const echoed = reply.json();
    expect(echoed).toMatchObject({ method: 'POST', url: '/form?x=1', body: '{"hello":"world"}' });
    expect(echoed.headers['x-forwarded-for']).toBe('203.0.113.9, 127.0.0.77');
    expect(echoed.headers.host).toBe(new URL(proxy.url).host);
    expect(reply.headers['set-cookie']).toEqual(['first=one; Path=/', 'second=one; Path=/; HttpOnly']);
    expect([client.cookie('first'), client.cookie('second')]).toEqual(['one', 'one']);
    client.close();
  });

  it('answers 502 when an upstream cannot be reached, and 503 before it has any', async () => {
    const down = await startRoundRobinProxy();
    const client = new Visitor(down.url);
    expect((await client.send('GET', '/')).status).toBe(503);
    // A port nothing listens on: the one a closed server just gave up.
    const gone = await echoServer('gone');
    await new Promise((resolve) => gone.server.close(resolve));
    down.setUpstreams([gone.url]);
    const reply = await client.send('GET', '/');
    expect(reply.status).toBe(502);
    expect(reply.body).toMatch(/^Upstream 0 failed: .*ECONNREFUSED/);
    client.close();
    await down.close();
  });
});
