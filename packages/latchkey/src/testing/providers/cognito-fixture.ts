/**
 * An Amazon Cognito user pool's hosted-UI endpoints on loopback, as AWS documents them
 * (https://docs.aws.amazon.com/cognito/latest/developerguide/federation-endpoints.html):
 * - GET /oauth2/authorize (authorize-endpoint.html): response_type=code, the app client's id and
 *   one of its callback URLs, exactly; back to the callback with `code` and `state`, or with `error`
 *   (and `error_description`) when the sign-in fails;
 * - POST /oauth2/token (token-endpoint.html): form-encoded, the client authenticated with HTTP Basic
 *   or client_secret in the body; each code once, for the redirect_uri it was issued with; a JSON
 *   answer with access_token, id_token, refresh_token, token_type Bearer and expires_in, or HTTP 400
 *   with {"error": "invalid_grant" | "invalid_client" | "invalid_request" | "unsupported_grant_type"};
 * - GET /oauth2/userInfo (userinfo-endpoint.html): the access token as a Bearer header; the
 *   person's attributes, `email_verified` and `phone_number_verified` as the strings "true" and
 *   "false"; HTTP 401 with WWW-Authenticate error="invalid_token" otherwise.
 * There are no pages: the test says who signs in (`nextLogin`, or per call), as the hosted UI's
 * sign-in would.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A user of the pool: the attributes userInfo answers with (sub among them). */
export type CognitoUser = Record<string, string> & { sub: string };

/** Who signs in at the hosted UI, someone who declines, or a failure the pool reports on the callback. */
export type CognitoOutcome = { login: string } | { deny: true } | { error: string };

export interface CognitoFixtureOptions {
  clientId: string;
  clientSecret: string;
  callbackUrls: string[];
  users: CognitoUser[];
}

export interface CognitoFixture {
  /** The pool's domain (what the `domain` setting holds), e.g. http://127.0.0.1:40123. */
  readonly domain: string;
  nextLogin: string | undefined;
  /** The paths requested, in order, for tests that check what was asked. */
  readonly requests: string[];
  /** Plays the browser at the authorization URL: the redirect back to the callback, as a URL. */
  authorize(authorizationUrl: URL | string, options?: { as?: CognitoOutcome }): Promise<URL>;
  close(): Promise<void>;
}

interface IssuedCode {
  sub: string;
  redirectUri: string;
}

export async function startCognitoFixture(options: CognitoFixtureOptions): Promise<CognitoFixture> {
  const users = new Map(options.users.map((user) => [user.sub, user]));
  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, string>();
  const chosen = new Map<string, CognitoOutcome>();
  const requests: string[] = [];

  function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', 'cache-control': 'no-store', ...headers }).end(JSON.stringify(body));
  }

  function authorize(url: URL, res: ServerResponse): void {
    const params = url.searchParams;
    const redirectUri = params.get('redirect_uri') ?? '';
    // An unknown client or callback is shown an error page: never redirected to a URL nobody registered.
    if (params.get('client_id') !== options.clientId || !options.callbackUrls.includes(redirectUri)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('An error was encountered with the requested page.');
      return;
    }
    const back = new URL(redirectUri);
    const state = params.get('state');
    const outcome = chosen.get(state ?? '') ?? (handle.nextLogin === undefined ? undefined : { login: handle.nextLogin });
    chosen.delete(state ?? '');
    if (params.get('response_type') !== 'code') {
      back.searchParams.set('error', 'unsupported_response_type');
    } else if (outcome === undefined) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('the Cognito fixture was not told who signs in: set nextLogin or pass `as`');
      return;
    } else if ('deny' in outcome) {
      back.searchParams.set('error', 'access_denied');
    } else if ('error' in outcome) {
      back.searchParams.set('error', outcome.error);
      back.searchParams.set('error_description', 'The user pool could not complete the sign-in');
    } else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, { sub: outcome.login, redirectUri });
      back.searchParams.set('code', code);
    }
    if (state !== null) back.searchParams.set('state', state);
    res.writeHead(302, { location: back.href }).end();
  }

  function token(req: IncomingMessage, body: URLSearchParams, res: ServerResponse): void {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const [basicId, basicSecret] = basic === null ? [] : Buffer.from(basic[1]!, 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part.replace(/\+/g, ' ')));
    const clientId = basicId ?? body.get('client_id');
    const secret = basicSecret ?? body.get('client_secret');
    if (clientId !== options.clientId || secret !== options.clientSecret) return json(res, 400, { error: 'invalid_client' });
    if (body.get('grant_type') !== 'authorization_code') return json(res, 400, { error: 'unsupported_grant_type' });
    const code = body.get('code') ?? '';
    const issued = codes.get(code);
    codes.delete(code);
    if (issued === undefined || issued.redirectUri !== body.get('redirect_uri')) return json(res, 400, { error: 'invalid_grant' });
    const accessToken = randomBytes(20).toString('hex');
    accessTokens.set(accessToken, issued.sub);
    // The fixture's id_token is a placeholder: the OAuth 2.0 flow reads the person from userInfo.
    const idToken = ['{"alg":"none"}', JSON.stringify({ sub: issued.sub }), ''].map((part) => Buffer.from(part).toString('base64url')).join('.');
    json(res, 200, { access_token: accessToken, id_token: idToken, refresh_token: randomBytes(20).toString('hex'), token_type: 'Bearer', expires_in: 3600 });
  }

  function userInfo(req: IncomingMessage, res: ServerResponse): void {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const sub = bearer === null ? undefined : accessTokens.get(bearer[1]!);
    const user = sub === undefined ? undefined : users.get(sub);
    if (user === undefined) {
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token", error_description="Access token is expired, disabled, or deleted, or the user has globally signed out."' }).end();
      return;
    }
    json(res, 200, user);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fixture');
    requests.push(url.pathname);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const route = `${req.method} ${url.pathname}`;
      if (route === 'GET /oauth2/authorize') return authorize(url, res);
      if (route === 'POST /oauth2/token') {
        if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return json(res, 400, { error: 'invalid_request' });
        return token(req, new URLSearchParams(Buffer.concat(chunks).toString('utf8')), res);
      }
      if (route === 'GET /oauth2/userInfo') return userInfo(req, res);
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const domain = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const handle: CognitoFixture = {
    domain,
    nextLogin: undefined,
    requests,
    async authorize(authorizationUrl, authorizeOptions = {}) {
      const url = new URL(authorizationUrl);
      if (authorizeOptions.as !== undefined) chosen.set(url.searchParams.get('state') ?? '', authorizeOptions.as);
      const response = await fetch(url, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (location === null) throw new Error(`the Cognito fixture answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
      await response.body?.cancel();
      return new URL(location);
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return handle;
}
