/**
 * docs/writing-a-provider.md's worked example, kept honest: its code block is read from the page
 * itself (so the two cannot drift), type-checked as a project would compile it (importing
 * `@latchkey/core`, the package's published types), and then run: the kind it builds is given to
 * Latchkey as a project's own (createLatchkey's socialProviderKinds), its app configured the way the
 * page's "Turning it on" says (HUB_URL provider-wide), and a person signs up and in against an
 * Example Hub of our own on loopback, through the pages.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';
import type { ProviderKind } from './kind.js';

const REPOSITORY = fileURLToPath(new URL('../../../../../', import.meta.url));
const DOC = join(REPOSITORY, 'docs/writing-a-provider.md');
/** What `@latchkey/core` resolves to for a project: the package's published types (built before the suites run). */
const PUBLISHED_TYPES = join(REPOSITORY, 'packages/latchkey/dist/index.d.ts');
/** The same exports, from the source, for running the example in this process. */
const SOURCE_INDEX = fileURLToPath(new URL('../../index.js', import.meta.url));

/** The page's worked example: its one TypeScript block that calls oauth2ProviderKind. */
async function workedExample(): Promise<string> {
  const page = await readFile(DOC, 'utf8');
  const blocks = [...page.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!).filter((block) => block.includes('oauth2ProviderKind({'));
  expect(blocks, 'docs/writing-a-provider.md has one worked example calling oauth2ProviderKind').toHaveLength(1);
  return blocks[0]!;
}

/** The TypeScript errors of `file`, compiled with the repository's options and `@latchkey/core` as a project sees it. */
function typeErrors(file: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(REPOSITORY, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  const program = ts.createProgram([file], { ...config!.options, noEmit: true, paths: { '@latchkey/core': [PUBLISHED_TYPES] } });
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

interface HubPerson {
  id: number;
  login: string;
  name: string;
  email: string;
  email_verified: boolean;
}

/**
 * Example Hub on loopback, speaking the protocol the page's example assumes (RFC 6749 §4.1): the
 * authorize endpoint redirecting back with a code and the state, the token endpoint taking the
 * client's credentials in the body (client_secret_post, the base's default) and answering JSON, and
 * /api/user answering only the Bearer token it issued.
 */
async function startExampleHub(people: Map<string, HubPerson>): Promise<{ base: string; clientId: string; secret: string; app: FastifyInstance }> {
  const clientId = 'hub-client';
  const secret = randomBytes(12).toString('hex');
  const codes = new Map<string, { login: string; redirectUri: string }>();
  const tokens = new Map<string, string>();
  const app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.get('/oauth/authorize', (request, reply) => {
    const query = new URL(request.url, 'http://hub').searchParams;
    const redirectUri = query.get('redirect_uri');
    if (query.get('client_id') !== clientId || query.get('response_type') !== 'code' || query.get('scope') !== 'read:user' || redirectUri === null) return reply.code(400).send({ error: 'invalid_request' });
    const back = new URL(redirectUri);
    const login = query.get('fixture_as') ?? '';
    if (query.get('fixture_decision') === 'deny') back.searchParams.set('error', 'access_denied');
    else {
      const code = randomBytes(12).toString('hex');
      codes.set(code, { login, redirectUri });
      back.searchParams.set('code', code);
    }
    back.searchParams.set('state', query.get('state') ?? '');
    return reply.redirect(back.toString(), 302);
  });
  app.post('/oauth/token', (request, reply) => {
    const body = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
    if (body.get('client_id') !== clientId || body.get('client_secret') !== secret) return reply.code(401).send({ error: 'invalid_client' });
    const grant = codes.get(body.get('code') ?? '');
    codes.delete(body.get('code') ?? '');
    if (grant === undefined || grant.redirectUri !== body.get('redirect_uri')) return reply.code(400).send({ error: 'invalid_grant' });
    const token = randomBytes(16).toString('hex');
    tokens.set(token, grant.login);
    return reply.send({ access_token: token, token_type: 'bearer', expires_in: 3600 });
  });
  app.get('/api/user', (request, reply) => {
    const login = tokens.get(/^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '');
    const person = login === undefined ? undefined : people.get(login);
    return person === undefined ? reply.code(401).send({ message: 'Bad credentials' }) : reply.send(person);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return { base: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`, clientId, secret, app };
}

const PEOPLE = new Map<string, HubPerson>([
  ['ada', { id: 1815, login: 'ada', name: 'Ada Lovelace', email: 'ada@example.com', email_verified: true }],
  ['grace', { id: 1906, login: 'grace', name: 'Grace Hopper', email: 'grace@example.com', email_verified: false }],
]);

let folder: string;
let exampleHub: ProviderKind;
let hub: Awaited<ReturnType<typeof startExampleHub>>;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'latchkey-doc-example-'));
  const code = await workedExample();
  // A module of its own, as in the page (src/users/example-hub.ts); .mts: an ES module wherever it lies.
  await writeFile(join(folder, 'example-hub.mts'), code);
  await writeFile(join(folder, 'example-hub-run.mts'), code.replaceAll("'@latchkey/core'", JSON.stringify(SOURCE_INDEX)));
  exampleHub = ((await import(/* @vite-ignore */ join(folder, 'example-hub-run.mts'))) as { exampleHub: ProviderKind }).exampleHub;
  hub = await startExampleHub(PEOPLE);
});
afterAll(async () => {
  await hub?.app.close();
  await rm(folder, { recursive: true, force: true });
});

describe('docs/writing-a-provider.md’s worked example', () => {
  it('compiles against @latchkey/core as published', () => {
    expect(typeErrors(join(folder, 'example-hub.mts'))).toEqual([]);
  }, 120_000);

  it('is a provider kind under the id and name the page gives', () => {
    expect(exampleHub).toMatchObject({ id: 'example_hub', name: 'Example Hub' });
    expect(exampleHub.checkSettings({ hub_url: 'http://hub.example' })).toMatchObject({ key: 'hub_url', reason: 'invalid' });
  });
});

describe.each(testDatabaseKinds())('the worked example signing people up and in, on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser.close();
    await latchkey.destroy();
  });

  async function setUp(): Promise<void> {
    latchkey = await createTestLatchkey({
      kind,
      socialProviderKinds: [exampleHub],
      // As "Turning it on" says: HUB_URL provider-wide, the app's client id and secret.
      settings: { ACCOUNT_EMAIL_VERIFICATION: 'mandatory', SOCIALACCOUNT_PROVIDERS: { example_hub: { HUB_URL: hub.base, APPS: [{ client_id: hub.clientId, secret: hub.secret }] } } },
    });
    browser = await PageClient.create(latchkey);
  }

  async function signIn(client: PageClient, as: string, decision?: 'deny') {
    const started = await client.post('/accounts/example_hub/login/', {});
    expect(started.statusCode).toBe(302);
    const authorize = new URL(started.headers.location!);
    // The endpoints are the page's {hub_url} templates, filled from HUB_URL.
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${hub.base}/oauth/authorize`);
    authorize.searchParams.set('fixture_as', as);
    if (decision) authorize.searchParams.set('fixture_decision', decision);
    const answer = await fetch(authorize, { redirect: 'manual' });
    expect(answer.status).toBe(302);
    const callback = new URL(answer.headers.get('location')!);
    expect(callback.pathname).toBe('/accounts/example_hub/login/callback/');
    return client.get(callback.pathname + callback.search);
  }

  const sessionUser = async (client: PageClient) => (await latchkey.deps.sessions.load(client.cookies.get('sessionid')))?.userId;

  it('signs a new person up (the address Example Hub vouches for kept verified) and in again to the same account', async () => {
    await setUp();
    expect((await browser.get('/accounts/login/')).body).toContain('Example Hub');
    expect((await signIn(browser, 'ada')).headers.location).toBe('/');
    const user = (await latchkey.deps.store.users.findByEmail('ada@example.com'))!;
    expect(user).toMatchObject({ username: 'ada', name: 'Ada Lovelace' });
    expect(await sessionUser(browser)).toBe(user.id);
    expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: 'ada@example.com', verified: true, primary: true }]);
    expect(await latchkey.deps.store.socialAccounts.listForUser(user.id)).toMatchObject([{ provider: 'example_hub', uid: '1815' }]);

    const later = browser.another();
    expect((await signIn(later, 'ada')).headers.location).toBe('/');
    expect(await sessionUser(later)).toBe(user.id);
    expect(await latchkey.deps.store.users.count()).toBe(1);
  });

  it('keeps an address Example Hub does not vouch for unverified, and mails a link before anyone is signed in', async () => {
    await setUp();
    const answer = await signIn(browser, 'grace');
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('We have sent an email to verify your address.');
    const user = (await latchkey.deps.store.users.findByEmail('grace@example.com'))!;
    expect(await latchkey.deps.store.emailAddresses.listForUser(user.id)).toMatchObject([{ email: 'grace@example.com', verified: false }]);
    expect(latchkey.mailer.lastTo('grace@example.com')).toBeDefined();
    expect(await sessionUser(browser)).toBeFalsy();
  });

  it('takes a person who declines at Example Hub to the cancelled page', async () => {
    await setUp();
    expect((await signIn(browser, 'ada', 'deny')).headers.location).toBe('/accounts/3rdparty/login/cancelled/');
    expect(await latchkey.deps.store.users.count()).toBe(0);
  });
});
