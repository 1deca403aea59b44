/**
 * An Apple-shaped Sign in with Apple server on loopback, following Apple's REST API pages
 * (https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api:
 * "Request an authorization to the Sign in with Apple server", "Generate and validate tokens",
 * "Fetch Apple's public key for verifying token signature"), strict where Apple is strict:
 * - /auth/authorize answers a page whose form auto-posts to the redirect URI (response_mode=form_post,
 *   required when a scope is asked for) with code and state, and `user` (the name, as JSON) only
 *   on a person's first authorisation of the client; a refusal posts error=user_cancelled_authorize;
 * - /auth/token verifies the client secret: an ES256 JWT under the Key ID, signed with the
 *   registered .p8 key's public half, iss the Team ID, sub the client id, aud Apple, unexpired and
 *   at most six months long (invalid_client otherwise, as Apple answers); codes are single use;
 * - /auth/keys is a real RS256 JWKS, and ID tokens carry Apple's string booleans.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, exportJWK, jwtVerify, SignJWT, type JWTPayload } from 'jose';

const APPLE = 'https://appleid.apple.com';
const SIX_MONTHS_SECONDS = 15_777_000;

export interface AppleFixtureAccount {
  sub: string;
  email: string;
  /** As Apple sends it: a string. */
  emailVerified: 'true' | 'false';
  isPrivateEmail?: boolean;
  firstName: string;
  lastName: string;
}

export interface AppleFixtureOptions {
  clientIds: string[];
  teamId: string;
  keyId: string;
  /** The public half of the .p8 key registered under keyId. */
  clientKey: KeyObject;
  accounts: AppleFixtureAccount[];
  /** The fixture's time, for the client secrets it checks and the ID tokens it signs. */
  now: () => Date;
}

/** The form Apple's page auto-posts to the redirect URI. */
export interface AutoPostForm {
  action: URL;
  fields: Record<string, string>;
}

export interface AppleFixture {
  readonly authorizeUrl: string;
  readonly accessTokenUrl: string;
  readonly keysUrl: string;
  /**
   * 'other-key': ID tokens are signed by a key the JWKS does not hold (under the published kid).
   * 'dated-tomorrow': they say they were issued a day from now (iat, and exp ten minutes after).
   */
  readonly misbehave: { idTokens?: 'other-key' | 'dated-tomorrow' };
  /** Forgets who authorised the client (so the name is sent again), the secrets seen and any misbehaviour. */
  reset(): void;
  /** The client secrets' claims the token endpoint accepted, with their header's kid. */
  readonly acceptedSecrets: (JWTPayload & { kid?: string })[];
  /** Plays the browser at Apple's authorization page: the form it auto-posts back. */
  authorize(url: URL, options: { as: string } | { deny: true }): Promise<AutoPostForm>;
  /** An ID token for `sub`, as an iOS app gets from the native sign-in (aud: its bundle id). */
  idTokenFor(sub: string, audience: string): Promise<string>;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    request.on('error', reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export async function startAppleFixture(options: AppleFixtureOptions): Promise<AppleFixture> {
  const signing = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = 'fixture-apple-key';
  const jwks = { keys: [{ ...(await exportJWK(signing.publicKey)), kid, use: 'sig', alg: 'RS256' }] };
  const codes = new Map<string, { sub: string; clientId: string; redirectUri: string }>();
  const authorised = new Set<string>();
  const acceptedSecrets: (JWTPayload & { kid?: string })[] = [];
  const misbehave: AppleFixture['misbehave'] = {};
  const seconds = () => Math.floor(options.now().getTime() / 1000);

  async function idTokenFor(sub: string, audience: string): Promise<string> {
    const account = options.accounts.find((candidate) => candidate.sub === sub);
    if (!account) throw new Error(`No fixture account ${sub}`);
    const claims = {
      email: account.email,
      email_verified: account.emailVerified,
      is_private_email: account.isPrivateEmail === true ? 'true' : 'false',
      auth_time: seconds(),
      nonce_supported: true,
    };
    const key = misbehave.idTokens === 'other-key' ? stranger.privateKey : signing.privateKey;
    const issuedAt = seconds() + (misbehave.idTokens === 'dated-tomorrow' ? 24 * 60 * 60 : 0);
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(APPLE).setAudience(audience).setSubject(sub).setIssuedAt(issuedAt).setExpirationTime(issuedAt + 600).sign(key);
  }

  /** The client secret as Apple checks it; the reason it is refused, or undefined. */
  async function refusedSecret(secret: string, clientId: string): Promise<string | undefined> {
    try {
      const header = decodeProtectedHeader(secret);
      if (header.alg !== 'ES256' || header.kid !== options.keyId) return 'unknown key';
      const { payload } = await jwtVerify(secret, options.clientKey, { algorithms: ['ES256'], issuer: options.teamId, subject: clientId, audience: APPLE, currentDate: options.now(), requiredClaims: ['iat', 'exp'] });
      if (payload.exp! - payload.iat! > SIX_MONTHS_SECONDS) return 'valid for more than six months';
      acceptedSecrets.push({ ...payload, kid: header.kid });
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async function token(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    const clientId = body.get('client_id') ?? '';
    if (!options.clientIds.includes(clientId) || (await refusedSecret(body.get('client_secret') ?? '', clientId)) !== undefined) {
      return sendJson(response, 400, { error: 'invalid_client' });
    }
    if (body.get('grant_type') !== 'authorization_code') return sendJson(response, 400, { error: 'unsupported_grant_type' });
    const code = codes.get(body.get('code') ?? '');
    codes.delete(body.get('code') ?? '');
    if (!code || code.clientId !== clientId || code.redirectUri !== body.get('redirect_uri')) return sendJson(response, 400, { error: 'invalid_grant' });
    sendJson(response, 200, {
      access_token: `at-${randomBytes(8).toString('hex')}`,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: `rt-${randomBytes(8).toString('hex')}`,
      id_token: await idTokenFor(code.sub, clientId),
    });
  }

  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const handled = request.method === 'POST' && url.pathname === '/auth/token' ? token(request, response)
      : request.method === 'GET' && url.pathname === '/auth/keys' ? Promise.resolve(sendJson(response, 200, jwks))
      : Promise.resolve(void response.writeHead(404).end());
    handled.catch((error: unknown) => response.writeHead(500).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    authorizeUrl: `${base}/auth/authorize`,
    accessTokenUrl: `${base}/auth/token`,
    keysUrl: `${base}/auth/keys`,
    misbehave,
    acceptedSecrets,
    idTokenFor,
    reset() {
      delete misbehave.idTokens;
      authorised.clear();
      codes.clear();
      acceptedSecrets.length = 0;
    },

    // The authorization page is Apple's own sign-in UI; the fixture plays it here and renders the
    // auto-post form it ends with, so the test reads that form as a browser would run it.
    authorize(url, how) {
      const params = url.searchParams;
      const clientId = params.get('client_id') ?? '';
      const redirectUri = params.get('redirect_uri') ?? '';
      if (`${url.origin}${url.pathname}` !== `${base}/auth/authorize`) throw new Error(`Not the fixture's authorize URL: ${url.href}`);
      if (!options.clientIds.includes(clientId)) throw new Error(`invalid_client: ${clientId}`);
      if (params.get('response_type') !== 'code' && params.get('response_type') !== 'code id_token') throw new Error('unsupported response_type');
      if (params.has('scope') && params.get('response_mode') !== 'form_post') throw new Error('response_mode must be form_post when a scope is requested');
      const fields: Record<string, string> = { state: params.get('state') ?? '' };
      if ('deny' in how) {
        fields.error = 'user_cancelled_authorize';
      } else {
        const account = options.accounts.find((candidate) => candidate.sub === how.as)!;
        const code = `c-${randomBytes(12).toString('hex')}`;
        codes.set(code, { sub: account.sub, clientId, redirectUri });
        fields.code = code;
        // The name is shared once: on the first authorisation of this client by this person.
        const first = !authorised.has(`${clientId} ${account.sub}`);
        authorised.add(`${clientId} ${account.sub}`);
        const scopes = (params.get('scope') ?? '').split(' ');
        if (first && scopes.includes('name')) fields.user = JSON.stringify({ name: { firstName: account.firstName, lastName: account.lastName }, email: account.email });
      }
      const page = `<form method="post" action="${escapeHtml(redirectUri)}">${Object.entries(fields).map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`).join('')}</form><script>document.forms[0].submit()</script>`;
      return Promise.resolve(readAutoPostForm(page));
    },

    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The form of an auto-posting page, read back as the browser would submit it. */
export function readAutoPostForm(page: string): AutoPostForm {
  const unescape = (text: string) => text.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const action = /<form method="post" action="([^"]*)">/.exec(page)?.[1];
  if (action === undefined) throw new Error('No auto-post form on the page');
  const fields: Record<string, string> = {};
  for (const match of page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[match[1]!] = unescape(match[2]!);
  return { action: new URL(unescape(action)), fields };
}

/** A .p8 key as Apple gives one: an EC P-256 private key in PKCS#8 PEM, with its public half. */
export function generateAppleClientKey(): { pem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  return { pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicKey };
}
