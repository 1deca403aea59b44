/**
 * One loopback authorization server for the apps-and-media providers (Discord, Twitch, Spotify,
 * Dropbox, Zoom, Notion, Figma, Patreon, Strava), set to each provider's documented shape in turn: which
 * client authentication its token endpoint takes (Spotify, Zoom, Notion and Figma a Basic header;
 * the others the body, RFC 6749 §2.3.1), what its token answer adds (Notion's owner and workspace),
 * how its token endpoint refuses a code, what its profile endpoint answers and which headers that
 * endpoint insists on (Twitch's Client-Id). The real providers cannot be reached from the tests;
 * the pages each shape follows:
 * - Discord: https://discord.com/developers/docs/topics/oauth2 and
 *   https://discord.com/developers/docs/resources/user#get-current-user;
 * - Twitch: https://dev.twitch.tv/docs/authentication/getting-tokens-oauth/#authorization-code-grant-flow
 *   (its token errors are {error, status, message}) and https://dev.twitch.tv/docs/api/reference/#get-users
 *   (the Client-Id header, {data: [user]});
 * - Spotify: https://developer.spotify.com/documentation/web-api/tutorials/code-flow (Basic
 *   client authentication) and https://developer.spotify.com/documentation/web-api/reference/get-current-users-profile;
 * - Dropbox: https://developers.dropbox.com/oauth-guide and
 *   https://www.dropbox.com/developers/documentation/http/documentation#users-get_current_account (a POST);
 * - Zoom: https://developers.zoom.us/docs/integrations/oauth/ (Basic client authentication; its
 *   token errors are {reason, error}) and https://developers.zoom.us/docs/api/users/#tag/users/GET/users/{userId}
 *   (`verified` a number);
 * - Notion: https://developers.notion.com/docs/authorization (Basic client authentication, the
 *   person in the token answer's owner; no profile endpoint);
 * - Figma: https://www.figma.com/developers/api#oauth2 and https://www.figma.com/developers/api#get-me-endpoint;
 * - Patreon: https://docs.patreon.com/#oauth and https://docs.patreon.com/#get-api-oauth2-v2-identity
 *   (a JSON:API document);
 * - Strava: https://developers.strava.com/docs/authentication/ and
 *   https://developers.strava.com/docs/reference/#api-Athletes-getLoggedInAthlete, its errors a
 *   Fault (https://developers.strava.com/docs/reference/#api-models-Fault): {message, errors: [...]}.
 *
 * It is strict where they are: one use per code, the redirect_uri checked against the one the code
 * was issued for, the access token accepted only as a Bearer header. `fixture_decision` on the
 * authorization URL plays the person declining (error=access_denied) or the provider failing
 * (error=server_error), and `tokenError` makes the token endpoint refuse the code, in the shape's
 * `tokenErrorShape`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

/** How one provider speaks. */
export interface ProviderShape {
  clientAuthentication: 'client_secret_post' | 'client_secret_basic';
  /** Fields the token answer carries besides the token (Notion's owner, workspace_id). */
  tokenExtras?: Record<string, unknown>;
  /** What the profile endpoint answers; undefined: it is 404, for providers without one. */
  profile?: unknown;
  /** The one method the profile endpoint answers (GET unless said). */
  profileMethod?: 'GET' | 'POST';
  /** Headers the profile endpoint refuses to answer without, with their values. */
  profileHeaders?: Record<string, string>;
  /** How the token endpoint refuses a code: RFC 6749 §5.2's JSON unless the provider documents its own. */
  tokenErrorShape?: TokenErrorShape;
}

export type TokenErrorShape = keyof typeof TOKEN_ERRORS;

/** A refused code, as each documents it (the pages are listed at the top of this file). */
export const TOKEN_ERRORS = {
  /** RFC 6749 §5.2: Discord, Spotify, Dropbox, Notion, Figma and Patreon answer this way. */
  rfc6749: { status: 400, body: { error: 'invalid_grant', error_description: 'the code is unknown, used, or not this request’s' } },
  /** Twitch: the HTTP reason, the status again, and a message. */
  twitch: { status: 400, body: { error: 'Bad Request', status: 400, message: 'Invalid authorization code' } },
  /** Zoom: `reason` where RFC 6749 has error_description. */
  zoom: { status: 400, body: { reason: 'Invalid authorization code', error: 'invalid_request' } },
  /** Strava: a Fault, naming the resource and field at fault. */
  strava: { status: 400, body: { message: 'Bad Request', errors: [{ resource: 'AuthorizationCode', field: 'code', code: 'invalid' }] } },
} as const;

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface AppsFixture {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly authorizeUrl: string;
  readonly accessTokenUrl: string;
  readonly profileUrl: string;
  /** The provider the next requests speak as; set by the test. */
  shape: ProviderShape;
  /** The token endpoint refuses every code, in the shape's tokenErrorShape (RFC 6749 §5.2's invalid_grant unless said). */
  tokenError: boolean;
  readonly requests: SeenRequest[];
  /** Plays the browser at the authorization URL: the redirect back, as a URL. */
  authorize(authorizationUrl: string, decision?: 'allow' | 'deny' | 'fail'): Promise<URL>;
  close(): Promise<void>;
}

const CLIENT_ID = 'apps-fixture-client';

export async function startAppsFixture(): Promise<AppsFixture> {
  const clientSecret = randomBytes(16).toString('hex');
  const codes = new Map<string, string>();
  const accessTokens = new Set<string>();
  const requests: SeenRequest[] = [];
  const app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  let base = '';
  const handle = {
    shape: { clientAuthentication: 'client_secret_post', profile: {} } as ProviderShape,
    tokenError: false,
  };

  app.addHook('onRequest', (request, _reply, done) => {
    const url = new URL(request.url, base);
    requests.push({ method: request.method, path: url.pathname, query: url.searchParams, headers: request.headers });
    done();
  });

  app.get('/authorize', (request, reply) => {
    const query = new URL(request.url, base).searchParams;
    const redirectUri = query.get('redirect_uri');
    if (query.get('client_id') !== CLIENT_ID || query.get('response_type') !== 'code' || redirectUri === null) {
      return reply.code(400).send({ error: 'invalid_request' });
    }
    const back = new URL(redirectUri);
    const decision = query.get('fixture_decision');
    if (decision === 'deny') back.searchParams.set('error', 'access_denied');
    else if (decision === 'fail') {
      back.searchParams.set('error', 'server_error');
      back.searchParams.set('error_description', 'The provider could not complete the request.');
    } else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, redirectUri);
      back.searchParams.set('code', code);
    }
    if (query.has('state')) back.searchParams.set('state', query.get('state')!);
    return reply.redirect(back.toString(), 302);
  });

  app.post('/token', (request, reply) => {
    const body = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
    if (!clientAuthenticated(request, body)) return reply.code(401).send({ error: 'invalid_client', error_description: 'client authentication failed' });
    const code = body.get('code') ?? '';
    const redirectUri = codes.get(code);
    // One use per code (RFC 6749 §4.1.2), even when the exchange then fails.
    codes.delete(code);
    if (handle.tokenError || body.get('grant_type') !== 'authorization_code' || redirectUri === undefined || redirectUri !== body.get('redirect_uri')) {
      const refusal = TOKEN_ERRORS[handle.shape.tokenErrorShape ?? 'rfc6749'];
      return reply.code(refusal.status).send(refusal.body);
    }
    const accessToken = randomBytes(20).toString('hex');
    accessTokens.add(accessToken);
    return reply.send({ access_token: accessToken, token_type: 'bearer', expires_in: 3600, refresh_token: randomBytes(20).toString('hex'), ...handle.shape.tokenExtras });
  });

  // GET for most; Dropbox's users/get_current_account is an RPC endpoint, answering only a POST.
  const profile = (request: FastifyRequest, reply: FastifyReply) => {
    if (new URL(request.url, base).searchParams.has('access_token')) return reply.code(400).send({ message: 'access tokens in URLs are refused' });
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token === undefined || !accessTokens.has(token)) return reply.code(401).send({ error: 'invalid_token', message: 'the access token is missing or unknown' });
    for (const [name, value] of Object.entries(handle.shape.profileHeaders ?? {})) {
      if (request.headers[name.toLowerCase()] !== value) return reply.code(401).send({ error: 'Unauthorized', status: 401, message: `${name} header required` });
    }
    if (handle.shape.profile === undefined) return reply.code(404).send({ message: 'Not Found' });
    if (request.method !== (handle.shape.profileMethod ?? 'GET')) return reply.code(405).send({ message: 'Method Not Allowed' });
    return reply.send(handle.shape.profile);
  };
  app.get('/profile', profile);
  app.post('/profile', profile);

  /** RFC 6749 §2.3: one method per request, the one this provider takes. */
  function clientAuthenticated(request: FastifyRequest, body: URLSearchParams): boolean {
    const header = request.headers.authorization;
    if (handle.shape.clientAuthentication === 'client_secret_post') {
      return header === undefined && body.get('client_id') === CLIENT_ID && body.get('client_secret') === clientSecret;
    }
    if (body.has('client_secret') || header === undefined || !header.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
    const decode = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' '));
    const colon = decoded.indexOf(':');
    return colon > 0 && decode(decoded.slice(0, colon)) === CLIENT_ID && decode(decoded.slice(colon + 1)) === clientSecret;
  }

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

  return {
    clientId: CLIENT_ID,
    clientSecret,
    authorizeUrl: `${base}/authorize`,
    accessTokenUrl: `${base}/token`,
    profileUrl: `${base}/profile`,
    get shape() {
      return handle.shape;
    },
    set shape(value) {
      handle.shape = value;
    },
    get tokenError() {
      return handle.tokenError;
    },
    set tokenError(value) {
      handle.tokenError = value;
    },
    requests,
    async authorize(authorizationUrl, decision = 'allow') {
      const url = new URL(authorizationUrl);
      if (decision !== 'allow') url.searchParams.set('fixture_decision', decision);
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || location === null) throw new Error(`the fixture refused the authorization request: HTTP ${response.status} ${await response.text()}`);
      return new URL(location);
    },
    close: () => app.close(),
  };
}
