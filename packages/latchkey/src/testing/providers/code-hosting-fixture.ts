/**
 * One loopback server that plays the code-hosting providers of the catalogue, each under its own
 * path prefix and each speaking its documented protocol, the public page it follows named beside it:
 * - GitHub (/github, an Enterprise server's layout):
 *   https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps for the
 *   token answer, form-encoded unless the request accepts JSON;
 *   https://docs.github.com/en/apps/oauth-apps/maintaining-oauth-apps/troubleshooting-oauth-app-access-token-request-errors
 *   for a bad code, reported as error=bad_verification_code in a 200;
 *   https://docs.github.com/en/rest/users/users#get-the-authenticated-user and
 *   https://docs.github.com/en/rest/users/emails for /api/v3/user and /api/v3/user/emails, the
 *   latter answering 404 without the user:email scope;
 * - GitLab (/gitlab): https://docs.gitlab.com/ee/api/oauth2.html (JSON tokens, Doorkeeper's RFC 6749
 *   errors) and https://docs.gitlab.com/ee/api/users.html (/api/v4/user with a Bearer token, 401
 *   {"message"} otherwise, https://docs.gitlab.com/ee/api/rest/);
 * - Bitbucket (/bitbucket): https://developer.atlassian.com/cloud/bitbucket/oauth-2/ (the client
 *   authenticated with HTTP Basic only) and https://developer.atlassian.com/cloud/bitbucket/rest/api-group-users/
 *   (/2.0/user and the paginated /2.0/user/emails, {"values": [...]}), API errors as
 *   {"type": "error", "error": {...}} (https://developer.atlassian.com/cloud/bitbucket/rest/intro/);
 * - Stack Exchange (/stackexchange): https://api.stackexchange.com/docs/authentication (a
 *   form-encoded `access_token=...&expires=...` answer) and https://api.stackexchange.com/docs/me
 *   (/me reading access_token, key and site from the query, wrapped in {"items": [...]} as
 *   https://api.stackexchange.com/docs/wrapper says, errors as https://api.stackexchange.com/docs/error-handling);
 * - Atlassian (/atlassian): https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/
 *   (authorize insisting on audience=api.atlassian.com and prompt=consent, /me with a Bearer token).
 * Strict where the real ones are: one use per code, the redirect_uri and client checked, tokens
 * known. A person is chosen at the authorize step (`as`), declines (`deny`) or meets a provider
 * error (`fail`), as a browser at the provider would; `tokenError` makes every token endpoint
 * refuse the code in its provider's own error shape.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

export type CodeHostingFamily = 'github' | 'gitlab' | 'bitbucket' | 'stackexchange' | 'atlassian';

/** What the provider knows of one person: its /user (or /me) JSON, and its address list where it has one. */
export interface FixtureAccount {
  user: Record<string, unknown>;
  emails?: Record<string, unknown>[];
}

interface Grant {
  family: CodeHostingFamily;
  login: string;
  scope: string;
  redirectUri?: string;
}

export interface CodeHostingFixture {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Stack Exchange's request key (the app's `key` field). */
  readonly requestKey: string;
  /** The token endpoints refuse every code, each in its provider's error shape (GitHub's is a 200). */
  tokenError: boolean;
  /** The token endpoints' refusals, as sent: what a test checks the shape against. */
  readonly tokenErrors: { family: CodeHostingFamily; status: number; contentType: string; body: string }[];
  /** The people each provider knows, by the login a test signs in as. */
  readonly accounts: Record<CodeHostingFamily, Map<string, FixtureAccount>>;
  /** The app settings that point a provider of the family at this server. */
  settingsFor(family: CodeHostingFamily): Record<string, unknown>;
  /** Plays the browser at the authorization URL; the redirect back to the callback, as a URL. */
  authorize(url: string | URL, options: { as?: string; deny?: boolean; fail?: boolean }): Promise<URL>;
  close(): Promise<void>;
}

const AUTHORIZE_PATHS: Record<CodeHostingFamily, string> = {
  github: '/github/login/oauth/authorize',
  gitlab: '/gitlab/oauth/authorize',
  bitbucket: '/bitbucket/site/oauth2/authorize',
  stackexchange: '/stackexchange/oauth',
  atlassian: '/atlassian/authorize',
};

const TOKEN_PATHS: Record<CodeHostingFamily, string> = {
  github: '/github/login/oauth/access_token',
  gitlab: '/gitlab/oauth/token',
  bitbucket: '/bitbucket/site/oauth2/access_token',
  stackexchange: '/stackexchange/oauth/access_token',
  atlassian: '/atlassian/oauth/token',
};

export async function startCodeHostingFixture(): Promise<CodeHostingFixture> {
  const clientId = 'code-hosting-client';
  const clientSecret = randomBytes(16).toString('hex');
  const requestKey = randomBytes(8).toString('hex');
  const accounts = { github: new Map(), gitlab: new Map(), bitbucket: new Map(), stackexchange: new Map(), atlassian: new Map() } as CodeHostingFixture['accounts'];
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, Grant>();
  const tokenErrors: CodeHostingFixture['tokenErrors'] = [];
  const switches = { tokenError: false };
  const app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  let origin = '';

  for (const family of Object.keys(AUTHORIZE_PATHS) as CodeHostingFamily[]) {
    app.get(AUTHORIZE_PATHS[family], (request, reply) => authorizeStep(family, request, reply));
    app.post(TOKEN_PATHS[family], (request, reply) => tokenStep(family, request, reply));
  }

  function authorizeStep(family: CodeHostingFamily, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const query = new URL(request.url, origin).searchParams;
    const redirectUri = query.get('redirect_uri');
    if (query.get('client_id') !== clientId || redirectUri === null) return reply.code(400).send({ error: 'invalid_request' });
    // Atlassian's documented request: the API audience and the consent prompt are required.
    if (family === 'atlassian' && (query.get('audience') !== 'api.atlassian.com' || query.get('prompt') !== 'consent')) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'audience and prompt are required' });
    }
    const back = new URL(redirectUri);
    const login = query.get('fixture_as') ?? '';
    if (query.get('fixture_decision') === 'deny') {
      back.searchParams.set('error', 'access_denied');
    } else if (query.get('fixture_decision') === 'fail' || !accounts[family].has(login)) {
      back.searchParams.set('error', 'server_error');
      back.searchParams.set('error_description', 'The provider could not complete the request.');
    } else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, { family, login, scope: query.get('scope') ?? '', redirectUri });
      back.searchParams.set('code', code);
    }
    if (query.has('state')) back.searchParams.set('state', query.get('state')!);
    return reply.redirect(back.toString(), 302);
  }

  function tokenStep(family: CodeHostingFamily, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const body = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
    if (!clientAuthenticated(family, request, body)) return tokenError(family, request, reply, 401, 'invalid_client');
    const code = body.get('code') ?? '';
    const grant = codes.get(code);
    codes.delete(code);
    if (switches.tokenError || grant === undefined || grant.family !== family || grant.redirectUri !== body.get('redirect_uri')) return tokenError(family, request, reply, 400, 'invalid_grant');
    const accessToken = randomBytes(20).toString('hex');
    tokens.set(accessToken, { family, login: grant.login, scope: grant.scope });
    if (family === 'stackexchange') return reply.type('text/plain').send(new URLSearchParams({ access_token: accessToken, expires: '86400' }).toString());
    const answer = { access_token: accessToken, token_type: 'bearer', scope: grant.scope, expires_in: 7200 };
    if (family === 'github' && !acceptsJson(request)) return reply.type('application/x-www-form-urlencoded').send(new URLSearchParams({ ...answer, expires_in: '7200' }).toString());
    return reply.send(family === 'bitbucket' ? { ...answer, scopes: grant.scope, refresh_token: randomBytes(12).toString('hex') } : answer);
  }

  /** Bitbucket documents HTTP Basic; the others take the client's credentials in the form. */
  function clientAuthenticated(family: CodeHostingFamily, request: FastifyRequest, body: URLSearchParams): boolean {
    if (family !== 'bitbucket') return body.get('client_id') === clientId && body.get('client_secret') === clientSecret;
    const expected = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
    return request.headers.authorization === expected && !body.has('client_secret');
  }

  function tokenError(family: CodeHostingFamily, request: FastifyRequest, reply: FastifyReply, status: number, error: string): FastifyReply {
    const description = 'The code passed is incorrect or expired.';
    const send = (code: number, contentType: string, body: string): FastifyReply => {
      tokenErrors.push({ family, status: code, contentType, body });
      return reply.code(code).type(contentType).send(body);
    };
    // GitHub (its troubleshooting page, above) reports a bad code in a 200, in the answer's own encoding.
    if (family === 'github') {
      const answer = { error: 'bad_verification_code', error_description: description, error_uri: 'https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code' };
      return acceptsJson(request) ? send(200, 'application/json', JSON.stringify(answer)) : send(200, 'application/x-www-form-urlencoded', new URLSearchParams(answer).toString());
    }
    // GitLab (Doorkeeper), Bitbucket, Stack Exchange and Atlassian answer RFC 6749 §5.2's JSON error.
    return send(status, 'application/json', JSON.stringify({ error, error_description: description }));
  }

  /** The person a request's access token belongs to (Bearer header, or Stack Exchange's query parameter). */
  function holder(family: CodeHostingFamily, request: FastifyRequest): { grant: Grant; account: FixtureAccount } | undefined {
    const query = new URL(request.url, origin).searchParams;
    const token = family === 'stackexchange' ? query.get('access_token') : /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const grant = token === undefined || token === null ? undefined : tokens.get(token);
    const account = grant?.family === family ? accounts[family].get(grant.login) : undefined;
    return grant !== undefined && account !== undefined ? { grant, account } : undefined;
  }

  function api(family: CodeHostingFamily, path: string, answer: (found: { grant: Grant; account: FixtureAccount }, reply: FastifyReply, query: URLSearchParams) => FastifyReply): void {
    app.get(path, (request, reply) => {
      const found = holder(family, request);
      if (found === undefined) return unauthorized(family, reply);
      return answer(found, reply, new URL(request.url, origin).searchParams);
    });
  }

  function unauthorized(family: CodeHostingFamily, reply: FastifyReply): FastifyReply {
    if (family === 'gitlab') return reply.code(401).send({ message: '401 Unauthorized' });
    if (family === 'bitbucket') return reply.code(401).send({ type: 'error', error: { message: 'Access token expired or invalid.' } });
    if (family === 'stackexchange') return reply.code(400).send({ error_id: 403, error_message: 'access_token not found', error_name: 'access_token_required' });
    if (family === 'atlassian') return reply.code(401).send({ code: 401, message: 'Unauthorized' });
    return reply.code(401).send({ message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
  }

  api('github', '/github/api/v3/user', ({ account }, reply) => reply.send(account.user));
  api('github', '/github/api/v3/user/emails', ({ grant, account }, reply) => {
    const scopes = grant.scope.split(/[\s,]+/);
    if (!scopes.includes('user:email') && !scopes.includes('user')) return reply.code(404).send({ message: 'Not Found' });
    return reply.send(account.emails ?? []);
  });
  api('gitlab', '/gitlab/api/v4/user', ({ grant, account }, reply) =>
    grant.scope.split(' ').includes('read_user') ? reply.send(account.user) : reply.code(403).send({ error: 'insufficient_scope' }),
  );
  api('bitbucket', '/bitbucket/api/2.0/user', ({ account }, reply) => reply.send({ type: 'user', ...account.user }));
  api('bitbucket', '/bitbucket/api/2.0/user/emails', ({ account }, reply) => {
    const values = (account.emails ?? []).map((entry) => ({ type: 'email', ...entry }));
    return reply.send({ pagelen: 10, page: 1, size: values.length, values });
  });
  api('stackexchange', '/stackexchange/api/2.3/me', ({ account }, reply, query) => {
    if (query.get('key') !== requestKey) return reply.code(400).send({ error_id: 405, error_message: 'key is required when access_token is passed', error_name: 'key_required' });
    const items = query.get('site') === 'stackoverflow' ? [account.user] : [];
    return reply.send({ items, has_more: false, quota_max: 10000, quota_remaining: 9999 });
  });
  api('atlassian', '/atlassian/me', ({ account }, reply) => reply.send(account.user));

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

  return {
    clientId,
    clientSecret,
    requestKey,
    accounts,
    get tokenError() {
      return switches.tokenError;
    },
    set tokenError(value) {
      switches.tokenError = value;
    },
    tokenErrors,
    settingsFor(family) {
      const at = (path: string) => `${origin}${path}`;
      switch (family) {
        case 'github':
          return { github_url: at('/github') };
        case 'gitlab':
          return { gitlab_url: at('/gitlab') };
        case 'bitbucket':
          return { authorize_url: at(AUTHORIZE_PATHS.bitbucket), access_token_url: at(TOKEN_PATHS.bitbucket), api_url: at('/bitbucket/api/2.0') };
        case 'stackexchange':
          return { authorize_url: at(AUTHORIZE_PATHS.stackexchange), access_token_url: at(TOKEN_PATHS.stackexchange), profile_url: at('/stackexchange/api/2.3/me') };
        case 'atlassian':
          return { authorize_url: at(AUTHORIZE_PATHS.atlassian), access_token_url: at(TOKEN_PATHS.atlassian), profile_url: at('/atlassian/me') };
      }
    },
    async authorize(url, options) {
      const target = new URL(url);
      if (options.as !== undefined) target.searchParams.set('fixture_as', options.as);
      if (options.deny) target.searchParams.set('fixture_decision', 'deny');
      if (options.fail) target.searchParams.set('fixture_decision', 'fail');
      const response = await fetch(target, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status !== 302 || location === null) throw new Error(`the fixture refused the authorization request: HTTP ${response.status} ${await response.text()}`);
      return new URL(location);
    },
    close: () => app.close(),
  };
}

function acceptsJson(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('application/json');
}
