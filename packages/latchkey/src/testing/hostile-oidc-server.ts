/**
 * An OpenID Connect provider that misbehaves on request, for the cases a real provider will not
 * produce: tokens with the wrong issuer, audience, nonce or algorithm, tokens dated in the future,
 * garbage JSON, an endpoint that never answers. Each test sets `behaviour`; what it leaves unset is answered correctly.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { systemClock, type Clock } from '../core/clock.js';

export interface HostileBehaviour {
  /** Reshapes the discovery document; a string is sent as the raw body. */
  discovery?: (document: Record<string, unknown>) => Record<string, unknown> | string;
  /** Reshapes the ID token's claims (which start out right: iss, aud, sub, nonce, exp, iat, email). */
  idTokenClaims?: (claims: JWTPayload) => JWTPayload;
  /**
   * Seconds ahead of the server's clock the ID token says it was issued (its iat; exp stays ten
   * minutes after that): a token dated in the future, which a site must not take as fresh.
   */
  idTokenIssuedAhead?: number;
  /** How the ID token is signed: with the server's RSA key (default), not at all, or HS256 with the client secret. */
  idTokenSigning?: 'RS256' | 'none' | 'HS256-client-secret';
  /** 'hang': the token endpoint accepts the request and never answers. 'garbage': it answers invalid JSON. */
  token?: 'hang' | 'garbage';
  /** Reshapes userinfo (which starts out as the ID token's sub, email and email_verified); a string is the raw body. */
  userinfo?: (claims: Record<string, unknown>) => Record<string, unknown> | string;
}

export interface HostileOidcServer {
  /** The issuer and server_url: http://127.0.0.1:<port>. */
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  behaviour: HostileBehaviour;
  /**
   * The time its ID tokens are issued at (iat, and exp ten minutes later): the wall clock until a
   * test gives the site's, so that the site, which checks them on its own clock, agrees with it.
   */
  clock: Clock;
  /** Plays the browser: the authorization endpoint redirects straight back with a code. */
  followAuthorization(authorizationUrl: URL): Promise<URL>;
  /** An ID token as `behaviour` shapes it, for headless token login (verifyIdToken). */
  mintIdToken(): Promise<string>;
  close(): Promise<void>;
}

export async function startHostileOidcServer(): Promise<HostileOidcServer> {
  const clientId = 'hostile-client';
  const clientSecret = randomBytes(24).toString('hex');
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'hostile-key', alg: 'RS256', use: 'sig' };
  /** The nonce each code was issued for; the token for an access token, for userinfo. */
  const nonceByCode = new Map<string, string | undefined>();
  const claimsByAccessToken = new Map<string, JWTPayload>();

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => json(res, 500, { error: 'server_error', error_description: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', issuer);
    const { behaviour } = handle;
    switch (url.pathname) {
      case '/.well-known/openid-configuration': {
        const document = (behaviour.discovery ?? ((d) => d))(discoveryDocument());
        if (typeof document === 'string') raw(res, 200, document);
        else json(res, 200, document);
        return;
      }
      case '/jwks':
        json(res, 200, { keys: [publicJwk] });
        return;
      case '/authorize': {
        const code = randomBytes(16).toString('hex');
        nonceByCode.set(code, url.searchParams.get('nonce') ?? undefined);
        const back = new URL(url.searchParams.get('redirect_uri')!);
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        back.searchParams.set('iss', issuer);
        res.writeHead(302, { location: back.href }).end();
        return;
      }
      case '/token':
        await token(req, res, behaviour);
        return;
      case '/userinfo': {
        const claims = claimsByAccessToken.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
        if (claims === undefined) {
          json(res, 401, { error: 'invalid_token' });
          return;
        }
        const userinfo = (behaviour.userinfo ?? ((c) => c))({ sub: claims.sub, email: claims.email, email_verified: claims.email_verified });
        if (typeof userinfo === 'string') raw(res, 200, userinfo);
        else json(res, 200, userinfo);
        return;
      }
      default:
        json(res, 404, { error: 'not_found' });
    }
  }

  async function token(req: IncomingMessage, res: ServerResponse, behaviour: HostileBehaviour): Promise<void> {
    if (behaviour.token === 'hang') return; // the socket stays open until close()
    if (behaviour.token === 'garbage') {
      raw(res, 200, '{"access_token": "half a document');
      return;
    }
    const body = new URLSearchParams(await readBody(req));
    const code = body.get('code') ?? '';
    if (!nonceByCode.has(code)) {
      json(res, 400, { error: 'invalid_grant' });
      return;
    }
    const nonce = nonceByCode.get(code);
    nonceByCode.delete(code);
    const claims = idTokenClaims(behaviour, nonce);
    const accessToken = randomBytes(16).toString('hex');
    claimsByAccessToken.set(accessToken, claims);
    json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, id_token: await sign(claims, behaviour.idTokenSigning ?? 'RS256') });
  }

  function idTokenClaims(behaviour: HostileBehaviour, nonce: string | undefined): JWTPayload {
    const issuedAt = Math.floor(handle.clock.now().getTime() / 1000) + (behaviour.idTokenIssuedAhead ?? 0);
    const good: JWTPayload = { iss: issuer, aud: clientId, sub: 'hostile-user', nonce, iat: issuedAt, exp: issuedAt + 600, email: 'mallory@example.com', email_verified: true };
    return (behaviour.idTokenClaims ?? ((c) => c))(good);
  }

  function sign(claims: JWTPayload, signing: NonNullable<HostileBehaviour['idTokenSigning']>): Promise<string> | string {
    switch (signing) {
      case 'none':
        return new UnsecuredJWT(claims).encode();
      case 'HS256-client-secret':
        return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(clientSecret));
      case 'RS256':
        return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: publicJwk.kid }).sign(privateKey);
    }
  }

  /** A discovery document that advertises `none` and HS256, so only the client's own allow-list stands in the way. */
  function discoveryDocument(): Record<string, unknown> {
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256', 'HS256', 'none'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    };
  }

  const handle: HostileOidcServer = {
    issuer,
    clientId,
    clientSecret,
    behaviour: {},
    clock: systemClock,
    async followAuthorization(authorizationUrl) {
      const response = await fetch(authorizationUrl, { redirect: 'manual' });
      await response.body?.cancel();
      return new URL(response.headers.get('location')!);
    },
    async mintIdToken() {
      return sign(idTokenClaims(handle.behaviour, undefined), handle.behaviour.idTokenSigning ?? 'RS256');
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return handle;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  raw(res, status, JSON.stringify(body));
}

function raw(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
