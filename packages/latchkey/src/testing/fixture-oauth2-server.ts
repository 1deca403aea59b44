/**
 * A small OAuth 2.0 authorization server on loopback, shaped like the providers the OAuth2 base
 * serves (GitHub's /authorize, /token and /user, /user/emails), strict where real ones are strict:
 * one use per code, the redirect_uri and client authentication checked as configured, PKCE S256
 * verified whenever a challenge was sent, the access token accepted only as a Bearer header. It
 * misbehaves on request (`misbehave`) for the cases no real provider produces on demand.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

export type TokenMisbehaviour = 'hang' | 'garbage' | 'status-500' | 'no-access-token' | 'error-in-200' | 'flood';
export type UserMisbehaviour = 'hang' | 'garbage' | 'status-500' | 'missing-id' | 'huge-uid' | 'redirect';

export interface FixtureOAuth2Config {
  /** The one method the token endpoint accepts (a request using the other, or both, is invalid_client). */
  clientAuthentication: 'client_secret_post' | 'client_secret_basic';
  /** 'form-unless-json-accepted' is GitHub's: form-encoded unless the request's Accept asks for JSON. */
  tokenFormat: 'json' | 'form' | 'form-unless-json-accepted';
  /** Refuse an authorization request without an S256 code_challenge. */
  requirePkce: boolean;
  clientSecret: string;
  /** What /user answers for the person signing in. */
  user: Record<string, unknown>;
  /** What /user/emails answers; undefined: 404, as GitHub without the user:email scope. */
  emails: Record<string, unknown>[] | undefined;
  misbehave: { token?: TokenMisbehaviour; user?: UserMisbehaviour };
}

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: URLSearchParams;
}

export interface FixtureOAuth2Server {
  readonly clientId: string;
  readonly authorizeUrl: string;
  readonly accessTokenUrl: string;
  readonly profileUrl: string;
  readonly emailsUrl: string;
  /** Changed by tests; `reset()` puts back the well-behaved defaults. */
  config: FixtureOAuth2Config;
  /** Every request received since the last reset, in order. */
  readonly requests: SeenRequest[];
  reset(): void;
  /** Plays the browser at the authorization URL: the redirect back to the callback, as a URL. `deny`: the person declines. */
  authorize(authorizationUrl: URL, options?: { deny?: boolean }): Promise<URL>;
  close(): Promise<void>;
}

const CLIENT_ID = 'fixture-client';

function defaultConfig(): FixtureOAuth2Config {
  return {
    clientAuthentication: 'client_secret_post',
    tokenFormat: 'json',
    requirePkce: false,
    clientSecret: randomBytes(16).toString('hex'),
    user: { id: 4242, login: 'ada', name: 'Ada Lovelace', email: 'ada@example.com' },
    emails: undefined,
    misbehave: {},
  };
}

interface IssuedCode {
  redirectUri: string;
  codeChallenge: string | undefined;
  scope: string;
}

export async function startFixtureOAuth2Server(): Promise<FixtureOAuth2Server> {
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Set<string>();
  // Hung requests must not keep close() waiting: every connection is cut when the server closes.
  const app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  const requests: SeenRequest[] = [];
  let config = defaultConfig();
  /** The server's own origin, known once it listens (the routes run only after). */
  let base = '';

  app.addHook('onRequest', (request, _reply, done) => {
    const url = new URL(request.url, base);
    requests.push({ method: request.method, path: url.pathname, query: url.searchParams, headers: request.headers, body: new URLSearchParams() });
    done();
  });
  app.addHook('preHandler', (request, _reply, done) => {
    if (typeof request.body === 'string') requests.at(-1)!.body = new URLSearchParams(request.body);
    done();
  });

  app.get('/authorize', (request, reply) => {
    const query = new URL(request.url, base).searchParams;
    const redirectUri = query.get('redirect_uri');
    if (query.get('client_id') !== CLIENT_ID || query.get('response_type') !== 'code' || redirectUri === null) {
      return reply.code(400).send({ error: 'invalid_request' });
    }
    const challenge = query.get('code_challenge') ?? undefined;
    if ((config.requirePkce || challenge !== undefined) && (challenge === undefined || query.get('code_challenge_method') !== 'S256')) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'an S256 code_challenge is required' });
    }
    const back = new URL(redirectUri);
    if (query.get('fixture_decision') === 'deny') {
      back.searchParams.set('error', 'access_denied');
    } else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, { redirectUri, codeChallenge: challenge, scope: query.get('scope') ?? '' });
      back.searchParams.set('code', code);
    }
    if (query.has('state')) back.searchParams.set('state', query.get('state')!);
    return reply.redirect(back.toString(), 302);
  });

  app.post('/token', (request, reply) => {
    const { misbehave } = config;
    if (misbehave.token === 'hang') return reply.hijack();
    if (misbehave.token === 'garbage') return reply.type('application/json').send('{"access_token": "half a document');
    if (misbehave.token === 'status-500') return reply.code(500).type('text/html').send('<html><body>Internal Server Error</body></html>');
    if (misbehave.token === 'flood') return reply.type('application/json').send(`{"access_token": "${'x'.repeat(2 * 1024 * 1024)}"}`);
    const body = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
    if (!clientAuthenticated(request, body)) return reply.code(401).send({ error: 'invalid_client', error_description: 'client authentication failed' });
    const code = body.get('code') ?? '';
    const issued = codes.get(code);
    // One use per code (RFC 6749 §4.1.2), even when the exchange then fails.
    codes.delete(code);
    if (body.get('grant_type') !== 'authorization_code' || issued === undefined || issued.redirectUri !== body.get('redirect_uri') || !pkceVerified(issued, body.get('code_verifier'))) {
      return tokenAnswer(request, reply, 400, { error: 'invalid_grant', error_description: 'the code is unknown, used, or not this request’s' });
    }
    if (misbehave.token === 'error-in-200') return tokenAnswer(request, reply, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
    if (misbehave.token === 'no-access-token') return tokenAnswer(request, reply, 200, { token_type: 'bearer', scope: issued.scope });
    const accessToken = randomBytes(20).toString('hex');
    accessTokens.add(accessToken);
    return tokenAnswer(request, reply, 200, { access_token: accessToken, token_type: 'bearer', scope: issued.scope, expires_in: 3600, refresh_token: randomBytes(20).toString('hex') });
  });

  app.get('/user', (request, reply) => {
    const refused = refuseUnlessBearer(request, reply);
    if (refused) return refused;
    const { misbehave, user } = config;
    switch (misbehave.user) {
      case 'hang':
        return reply.hijack();
      case 'garbage':
        return reply.type('application/json').send('{"id": 42, "login": ');
      case 'status-500':
        return reply.code(500).send({ message: 'Server Error' });
      case 'redirect':
        return reply.redirect(`${base}/elsewhere`, 302);
      case 'missing-id': {
        const { id: _id, ...withoutId } = user;
        return reply.send(withoutId);
      }
      case 'huge-uid':
        return reply.send({ ...user, id: 'u'.repeat(192) });
      default:
        return reply.send(user);
    }
  });

  app.get('/user/emails', (request, reply) => {
    const refused = refuseUnlessBearer(request, reply);
    if (refused) return refused;
    if (config.emails === undefined) return reply.code(404).send({ message: 'Not Found' });
    return reply.send(config.emails);
  });

  function clientAuthenticated(request: FastifyRequest, body: URLSearchParams): boolean {
    const { clientAuthentication, clientSecret } = config;
    const header = request.headers.authorization;
    // RFC 6749 §2.3: a client uses one method per request, never two.
    if (clientAuthentication === 'client_secret_post') {
      return header === undefined && body.get('client_id') === CLIENT_ID && body.get('client_secret') === clientSecret;
    }
    if (body.has('client_secret') || header === undefined || !header.startsWith('Basic ')) return false;
    const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // §2.3.1: each part was form-encoded before it was joined.
    const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
    return colon > 0 && decode(decoded.slice(0, colon)) === CLIENT_ID && decode(decoded.slice(colon + 1)) === clientSecret;
  }

  function refuseUnlessBearer(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
    if (new URL(request.url, base).searchParams.has('access_token')) return reply.code(400).send({ message: 'access tokens in URLs are refused' });
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token === undefined || !accessTokens.has(token)) return reply.code(401).send({ message: 'Bad credentials' });
    return undefined;
  }

  function tokenAnswer(request: FastifyRequest, reply: FastifyReply, status: number, answer: Record<string, string | number>): FastifyReply {
    const { tokenFormat } = config;
    const json = tokenFormat === 'json' || (tokenFormat === 'form-unless-json-accepted' && (request.headers.accept ?? '').includes('application/json'));
    if (json) return reply.code(status).send(answer);
    const form = new URLSearchParams(Object.entries(answer).map(([name, value]): [string, string] => [name, String(value)]));
    return reply.code(status).type('application/x-www-form-urlencoded').send(form.toString());
  }

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  base = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

  const handle: FixtureOAuth2Server = {
    clientId: CLIENT_ID,
    authorizeUrl: `${base}/authorize`,
    accessTokenUrl: `${base}/token`,
    profileUrl: `${base}/user`,
    emailsUrl: `${base}/user/emails`,
    get config() {
      return config;
    },
    set config(value) {
      config = value;
    },
    requests,
    reset() {
      config = defaultConfig();
      requests.length = 0;
    },
    async authorize(authorizationUrl, options = {}) {
      const url = new URL(authorizationUrl);
      if (options.deny) url.searchParams.set('fixture_decision', 'deny');
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || location === null) throw new Error(`the fixture refused the authorization request: HTTP ${response.status} ${await response.text()}`);
      return new URL(location);
    },
    close: () => app.close(),
  };

  return handle;
}

/** RFC 7636 §4.6: with a challenge, the verifier must hash to it; without one, none may be sent. */
function pkceVerified(issued: IssuedCode, verifier: string | null): boolean {
  if (issued.codeChallenge === undefined) return verifier === null;
  return verifier !== null && createHash('sha256').update(verifier, 'ascii').digest('base64url') === issued.codeChallenge;
}
