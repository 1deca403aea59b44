/**
 * Microsoft, Facebook, X and Reddit on loopback, each speaking its documented protocol, for the
 * networks batch's tests (the real ones cannot be reached from the tests). Each lives under its own
 * path prefix and is strict where its documentation is:
 * - Microsoft identity platform (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow):
 *   /ms/{tenant}/oauth2/v2.0/authorize|token, client_secret_post, JSON errors with AADSTS codes;
 *   Graph /graph/v1.0/me (https://learn.microsoft.com/en-us/graph/api/user-get), errors as {error: {code, message}}.
 * - Facebook Login (https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow):
 *   /fb-www/{version}/dialog/oauth, Graph /fb-graph/{version}/oauth/access_token, /me with a checked
 *   appsecret_proof (https://developers.facebook.com/docs/graph-api/securing-requests), and
 *   /debug_token with the app's token (https://developers.facebook.com/docs/graph-api/reference/debug_token).
 * - X (https://docs.x.com/resources/fundamentals/authentication/oauth-2-0/authorization-code):
 *   /x/i/oauth2/authorize (PKCE S256 required), /x/2/oauth2/token (HTTP Basic), /x/2/users/me ({data: user}).
 * - Reddit (https://github.com/reddit-archive/reddit/wiki/OAuth2): /reddit/api/v1/authorize (duration
 *   required), /reddit/api/v1/access_token (HTTP Basic), /reddit/api/v1/me (a User-Agent of the client's own required).
 * Access tokens are taken only as a Bearer header, never in a URL.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

export type NetworkProvider = 'microsoft' | 'facebook' | 'twitter_oauth2' | 'reddit';

export interface NetworkClient {
  id: string;
  secret: string;
}

/** The apps registered at each provider: ours, and (for Facebook) another app whose tokens must not sign anyone in here. */
export const NETWORK_CLIENTS: Readonly<Record<NetworkProvider, NetworkClient>> = {
  microsoft: { id: 'ms-client', secret: 'ms-secret' },
  facebook: { id: '1234567890', secret: 'fb-app-secret' },
  twitter_oauth2: { id: 'x-client', secret: 'x-secret' },
  reddit: { id: 'reddit-client', secret: 'reddit-secret' },
};
export const OTHER_FACEBOOK_APP: NetworkClient = { id: '9999999999', secret: 'other-app-secret' };

interface Issued {
  provider: NetworkProvider;
  clientId: string;
  redirectUri: string;
  challenge: string | undefined;
}

interface Granted {
  provider: NetworkProvider;
  clientId: string;
  valid: boolean;
}

export interface NetworksFixture {
  readonly base: string;
  /** What each provider's profile endpoint answers (the whole JSON, before any wrapping or field selection). */
  people: Record<NetworkProvider, Record<string, unknown>>;
  /** When set, every token endpoint answers its provider's error shape for an expired or used code. */
  failTokens: boolean;
  /** Plays the browser at the provider: the redirect back, as a URL. `deny`: the person declines. */
  authorize(url: string | URL, options?: { deny?: boolean }): Promise<URL>;
  /** An access token as Facebook's SDK hands it to a mobile app of `app` for the current Facebook person. */
  facebookToken(app?: NetworkClient): string;
  /** Makes a token invalid (expired, or the person removed the app). */
  revoke(token: string): void;
  close(): Promise<void>;
}

export function defaultPeople(): Record<NetworkProvider, Record<string, unknown>> {
  return {
    microsoft: { id: '87d349ed-44d7-43e1-9a83-5f2406dee5bd', displayName: 'Ada Lovelace', givenName: 'Ada', surname: 'Lovelace', mail: null, userPrincipalName: 'ada@contoso.example' },
    facebook: { id: '10158822334455667', name: 'Grace Hopper', first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com' },
    twitter_oauth2: { id: '1460987654321987654', name: 'Katherine Johnson', username: 'kjohnson' },
    reddit: { id: '1w72', name: 'hedy_lamarr', created_utc: 1_600_000_000, verified: true, has_verified_email: true },
  };
}

const CLIENT_BY_ID = new Map([...Object.values(NETWORK_CLIENTS), OTHER_FACEBOOK_APP].map((client) => [client.id, client]));

export async function startNetworksFixture(): Promise<NetworksFixture> {
  const codes = new Map<string, Issued>();
  const tokens = new Map<string, Granted>();
  const app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  let base = '';

  const fixture: NetworksFixture = {
    get base() {
      return base;
    },
    people: defaultPeople(),
    failTokens: false,
    async authorize(url, options = {}) {
      const target = new URL(url);
      if (options.deny) target.searchParams.set('fixture_decision', 'deny');
      const response = await fetch(target, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || location === null) throw new Error(`the fixture refused the authorization request: HTTP ${response.status} ${await response.text()}`);
      return new URL(location);
    },
    facebookToken(client = NETWORK_CLIENTS.facebook) {
      return grant('facebook', client.id);
    },
    revoke(token) {
      const granted = tokens.get(token);
      if (granted) granted.valid = false;
    },
    close: () => app.close(),
  };

  function grant(provider: NetworkProvider, clientId: string): string {
    const token = randomBytes(20).toString('hex');
    tokens.set(token, { provider, clientId, valid: true });
    return token;
  }

  const query = (request: FastifyRequest) => new URL(request.url, base).searchParams;
  const form = (request: FastifyRequest) => new URLSearchParams(typeof request.body === 'string' ? request.body : '');

  /** RFC 6749 §4.1.1-2, with each provider's own rules checked by `refuse` first. */
  function authorizeRoute(provider: NetworkProvider, refuse: (params: URLSearchParams) => string | undefined) {
    return (request: FastifyRequest, reply: FastifyReply) => {
      const params = query(request);
      const redirectUri = params.get('redirect_uri');
      const problem = params.get('client_id') !== NETWORK_CLIENTS[provider].id || params.get('response_type') !== 'code' || redirectUri === null ? 'invalid client_id, response_type or redirect_uri' : refuse(params);
      // An invalid request is shown to the person at the provider, never sent back (§4.1.2.1).
      if (problem !== undefined) return reply.code(400).type('text/plain').send(problem);
      const back = new URL(redirectUri!);
      if (params.get('fixture_decision') === 'deny') {
        back.searchParams.set('error', 'access_denied');
        back.searchParams.set('error_description', 'The user declined.');
      } else {
        const code = randomBytes(16).toString('hex');
        codes.set(code, { provider, clientId: NETWORK_CLIENTS[provider].id, redirectUri: redirectUri!, challenge: params.get('code_challenge') ?? undefined });
        back.searchParams.set('code', code);
      }
      if (params.has('state')) back.searchParams.set('state', params.get('state')!);
      return reply.redirect(back.toString(), 302);
    };
  }

  /** The code's grant, or undefined: one use per code, this provider's, this redirect_uri, the PKCE verifier when a challenge was sent. */
  function redeem(provider: NetworkProvider, body: URLSearchParams): Issued | undefined {
    const code = body.get('code') ?? '';
    const issued = codes.get(code);
    codes.delete(code);
    if (fixture.failTokens || issued === undefined || issued.provider !== provider || body.get('grant_type') !== 'authorization_code' || issued.redirectUri !== body.get('redirect_uri')) return undefined;
    const verifier = body.get('code_verifier');
    if (issued.challenge === undefined ? verifier !== null : verifier === null || createHash('sha256').update(verifier).digest('base64url') !== issued.challenge) return undefined;
    return issued;
  }

  function postCredentials(provider: NetworkProvider, request: FastifyRequest, body: URLSearchParams): boolean {
    const client = NETWORK_CLIENTS[provider];
    return request.headers.authorization === undefined && body.get('client_id') === client.id && body.get('client_secret') === client.secret;
  }

  function basicCredentials(provider: NetworkProvider, request: FastifyRequest, body: URLSearchParams): boolean {
    const client = NETWORK_CLIENTS[provider];
    const header = request.headers.authorization ?? '';
    if (body.has('client_secret') || !header.startsWith('Basic ')) return false;
    return Buffer.from(header.slice(6), 'base64').toString('utf8') === `${client.id}:${client.secret}`;
  }

  /** The Bearer token's grant for this provider, or undefined (then the provider's 401 is sent). */
  function bearer(provider: NetworkProvider, request: FastifyRequest): { token: string; granted: Granted } | undefined {
    if (query(request).has('access_token')) return undefined;
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const granted = token === undefined ? undefined : tokens.get(token);
    return granted?.provider === provider && granted.valid ? { token: token!, granted } : undefined;
  }

  // Microsoft identity platform and Graph.
  app.get('/ms/:tenant/oauth2/v2.0/authorize', authorizeRoute('microsoft', (params) => (params.get('scope')?.split(' ').includes('User.Read') ? undefined : 'AADSTS650053: the scope User.Read was not asked for')));
  app.post('/ms/:tenant/oauth2/v2.0/token', (request, reply) => {
    const body = form(request);
    if (!postCredentials('microsoft', request, body)) return reply.code(401).send({ error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.', error_codes: [7000215] });
    if (!redeem('microsoft', body)) return reply.code(400).send({ error: 'invalid_grant', error_description: 'AADSTS70008: The provided authorization code or refresh token has expired.', error_codes: [70008] });
    return reply.send({ token_type: 'Bearer', scope: 'User.Read', expires_in: 3599, ext_expires_in: 3599, access_token: grant('microsoft', NETWORK_CLIENTS.microsoft.id) });
  });
  app.get('/graph/v1.0/me', (request, reply) => {
    if (!bearer('microsoft', request)) return reply.code(401).send({ error: { code: 'InvalidAuthenticationToken', message: 'Access token is empty or invalid.' } });
    const selected = query(request).get('$select')?.split(',');
    const person = fixture.people.microsoft;
    return reply.send(selected === undefined ? person : Object.fromEntries(Object.entries(person).filter(([name]) => selected.includes(name))));
  });

  // Facebook Login and the Graph API.
  const graphError = (reply: FastifyReply, status: number, message: string, code: number) => reply.code(status).send({ error: { message, type: 'OAuthException', code, fbtrace_id: 'AbCdEf' } });
  app.get('/fb-www/:version/dialog/oauth', authorizeRoute('facebook', () => undefined));
  app.post('/fb-graph/:version/oauth/access_token', (request, reply) => {
    const body = form(request);
    if (!postCredentials('facebook', request, body)) return graphError(reply, 400, 'Error validating client secret.', 1);
    if (!redeem('facebook', body)) return graphError(reply, 400, 'This authorization code has been used.', 100);
    return reply.send({ access_token: grant('facebook', NETWORK_CLIENTS.facebook.id), token_type: 'bearer', expires_in: 5_183_944 });
  });
  app.get('/fb-graph/:version/me', (request, reply) => {
    const held = bearer('facebook', request);
    if (!held) return graphError(reply, 400, 'Invalid OAuth access token - Cannot parse access token', 190);
    const params = query(request);
    const secret = CLIENT_BY_ID.get(held.granted.clientId)!.secret;
    if (params.get('appsecret_proof') !== createHmac('sha256', secret).update(held.token).digest('hex')) return graphError(reply, 400, 'Invalid appsecret_proof provided in the API argument', 100);
    const fields = (params.get('fields') ?? 'id,name').split(',');
    return reply.send(Object.fromEntries(Object.entries(fixture.people.facebook).filter(([name]) => fields.includes(name))));
  });
  app.get('/fb-graph/:version/debug_token', (request, reply) => {
    // The app's token, `{app id}|{app secret}`, as the Authorization header.
    const appToken = /^Bearer (\d+)\|(.+)$/.exec(request.headers.authorization ?? '');
    if (query(request).has('access_token') || !appToken || CLIENT_BY_ID.get(appToken[1]!)?.secret !== appToken[2]) return graphError(reply, 400, 'Invalid OAuth access token signature.', 190);
    const input = query(request).get('input_token') ?? '';
    const granted = tokens.get(input);
    if (granted === undefined || granted.provider !== 'facebook') return graphError(reply, 400, 'Invalid OAuth access token - Cannot parse access token', 190);
    const data = { app_id: granted.clientId, type: 'USER', application: 'An app', expires_at: 1_900_000_000, is_valid: granted.valid, scopes: ['email', 'public_profile'], user_id: fixture.people.facebook.id };
    return reply.send({ data: granted.valid ? data : { ...data, error: { code: 190, message: 'Error validating access token: Session has expired.' } } });
  });

  // X.
  app.get('/x/i/oauth2/authorize', authorizeRoute('twitter_oauth2', (params) => (params.get('code_challenge') && params.get('code_challenge_method') === 'S256' ? undefined : 'Missing code_challenge')));
  app.post('/x/2/oauth2/token', (request, reply) => {
    const body = form(request);
    if (!basicCredentials('twitter_oauth2', request, body)) return reply.code(401).send({ error: 'unauthorized_client', error_description: 'Missing valid authorization header' });
    if (!redeem('twitter_oauth2', body)) return reply.code(400).send({ error: 'invalid_request', error_description: 'Value passed for the authorization code was invalid.' });
    return reply.send({ token_type: 'bearer', expires_in: 7200, access_token: grant('twitter_oauth2', NETWORK_CLIENTS.twitter_oauth2.id), scope: 'users.read tweet.read' });
  });
  app.get('/x/2/users/me', (request, reply) => {
    if (!bearer('twitter_oauth2', request)) return reply.code(401).send({ title: 'Unauthorized', type: 'about:blank', status: 401, detail: 'Unauthorized' });
    return reply.send({ data: fixture.people.twitter_oauth2 });
  });

  // Reddit.
  app.get('/reddit/api/v1/authorize', authorizeRoute('reddit', (params) => (['temporary', 'permanent'].includes(params.get('duration') ?? '') ? undefined : 'invalid duration parameter')));
  /** Reddit throttles generic clients: a request without a User-Agent of the client's own is refused. */
  const genericAgent = (request: FastifyRequest) => {
    const agent = request.headers['user-agent'] ?? '';
    return agent === '' || agent === 'node' || agent.startsWith('undici');
  };
  app.post('/reddit/api/v1/access_token', (request, reply) => {
    if (genericAgent(request)) return reply.code(429).send({ message: 'Too Many Requests', error: 429 });
    const body = form(request);
    if (!basicCredentials('reddit', request, body)) return reply.code(401).send({ message: 'Unauthorized', error: 401 });
    // Reddit reports a bad grant in a 200 answer.
    if (!redeem('reddit', body)) return reply.send({ error: 'invalid_grant' });
    return reply.send({ access_token: grant('reddit', NETWORK_CLIENTS.reddit.id), token_type: 'bearer', expires_in: 86_400, scope: 'identity', refresh_token: randomBytes(12).toString('hex') });
  });
  app.get('/reddit/api/v1/me', (request, reply) => {
    if (genericAgent(request)) return reply.code(429).send({ message: 'Too Many Requests', error: 429 });
    if (!bearer('reddit', request)) return reply.code(401).send({ message: 'Unauthorized', error: 401 });
    return reply.send(fixture.people.reddit);
  });

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  return fixture;
}
