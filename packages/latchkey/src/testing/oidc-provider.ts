/**
 * A real OpenID Connect provider for tests: panva's oidc-provider, in-process on 127.0.0.1. It is
 * a devDependency of the repository only, so this module is not exported from testing/index.ts;
 * test files import it by path.
 *
 * There are no login pages: the test says who signs in (`nextLogin`, or per call), and
 * followAuthorization plays the browser, finishing the interaction and granting the scopes. A real
 * browser sent to the provider gets the same: the interaction signs in `nextLogin` and returns it
 * to the client at once.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT } from 'jose';
// @ts-expect-error -- oidc-provider ships no type declarations; the little used here is typed below.
import ProviderModule from 'oidc-provider';

/** An account at the test provider. `userinfoClaims` override `claims` in userinfo only (Cognito's "true"/"false" strings). */
export interface TestOidcAccount {
  sub: string;
  claims?: Record<string, unknown>;
  userinfoClaims?: Record<string, unknown>;
}

export interface TestOidcClient {
  client_id: string;
  client_secret: string;
  /**
   * The redirect URIs the client may use, each matched exactly; or a function giving them, asked at
   * every authorization request, for a client whose address is known only after the provider has
   * started (a site that needs the issuer in its settings to start, and picks its port then).
   */
  redirect_uris: string[] | (() => readonly string[]);
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export interface TestOidcProviderOptions {
  clients: TestOidcClient[];
  accounts: TestOidcAccount[];
  /** A path for the issuer, e.g. '/us-east-1_AbCdEf123' to be shaped like a Cognito user pool's issuer. */
  issuerPath?: string;
  /** The issuer ends with a slash, as Auth0's does (https://tenant.auth0.com/). */
  issuerTrailingSlash?: boolean;
  /**
   * The endpoints' paths beneath the issuer, where a provider documents its own (Okta's
   * /oauth2/v1/authorize); oidc-provider's (/auth, /token, /me, /jwks) where not given.
   */
  routes?: Partial<Record<'authorization' | 'token' | 'userinfo' | 'jwks', string>>;
  /**
   * Claims each scope releases besides the usual ones (openid: sub; email: email, email_verified;
   * profile: name, given_name, family_name, preferred_username): a provider's own, such as Slack's
   * https://slack.com/team_id or Google's hd.
   */
  claims?: Record<string, string[]>;
}

/** Who signs in at the next interaction: an account's sub, or a refusal (error=access_denied). */
export type TestLogin = { login: string } | { deny: true };

export interface TestOidcProvider {
  /** The issuer (server_url for the client), e.g. http://127.0.0.1:40123/us-east-1_AbCdEf123. */
  readonly issuer: string;
  /** The account that signs in when followAuthorization is given no `as`. */
  nextLogin: string | undefined;
  /**
   * When set, the `iss` of the ID tokens the token endpoint answers with instead of the issuer,
   * re-signed with the provider's key: Google's tokens may name `accounts.google.com` while its
   * discovery names https://accounts.google.com.
   */
  idTokenIssuer: string | undefined;
  /**
   * The provider's time, which its tokens are issued at: the wall clock, which oidc-provider has no
   * way to move. Latchkey checks ID tokens on its own clock (deps.clock), so a test site that signs
   * in here starts its clock at this time, as a deployment's clock agrees with its identity
   * provider's; the test moves it from there.
   */
  now(): Date;
  /** Plays the browser from the authorization URL to the redirect back to the client (code, state, iss or error). */
  followAuthorization(authorizationUrl: URL | string, options?: { as?: TestLogin }): Promise<URL>;
  /**
   * An ID token signed with the provider's own key, as it issues them to `clientId` for the account
   * `sub` (its claims, then `claims`, which may override any: `aud`, `iss`, `azp`, `exp`). What a
   * mobile app's own sign-in hands over, and forged variants of it.
   */
  signIdToken(input: { clientId: string; sub: string; claims?: Record<string, unknown> }): Promise<string>;
  close(): Promise<void>;
}

/** The slice of oidc-provider's API this module uses. */
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; params: Record<string, unknown> }>;
  interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options: { mergeWithLastSubmission: boolean }): Promise<void>;
  Grant: new (input: { accountId: string; clientId: string }) => { addOIDCScope(scope: string): void; save(): Promise<string> };
  Client: { prototype: OidcClient };
}
interface OidcClient {
  clientId: string;
  redirectUriAllowed: (this: OidcClient, redirectUri: string) => boolean;
}
type OidcProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
const Provider = ProviderModule as unknown as OidcProviderClass;

/**
 * What oidc-provider is given as the redirect URI of a client whose URIs are decided later (it
 * needs a valid one at start): never allowed, since the client's function decides.
 */
const LATER_REDIRECT_URI = 'http://127.0.0.1/redirect-uris-decided-later';

export async function startTestOidcProvider(options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const issuerPath = (options.issuerPath ?? '').replace(/\/+$/, '');
  const tokenPath = `${issuerPath}${options.routes?.token ?? '/token'}`;
  const accounts = new Map(options.accounts.map((account) => [account.sub, account]));
  /** Per interaction uid, who followAuthorization said signs in. */
  const chosenLogins = new Map<string, TestLogin>();

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${issuerPath}/`)) {
      res.writeHead(404).end();
      return;
    }
    const path = url.slice(issuerPath.length);
    const interaction = /^\/interaction\/([^/?]+)/.exec(path);
    if (interaction !== null) {
      finishInteraction(req, res, interaction[1]!).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
      });
      return;
    }
    if (handle.idTokenIssuer !== undefined && url.split('?')[0] === tokenPath) reissueIdToken(res, handle.idTokenIssuer);
    // oidc-provider's routes have no prefix; it finds its mount path from originalUrl minus url.
    Object.assign(req, { originalUrl: url, url: path });
    handleOidcRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}${issuerPath}${options.issuerTrailingSlash === true ? '/' : ''}`;

  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const privateKey = await importJWK({ ...signingKey, alg: 'RS256' }, 'RS256');
  // Made once the port (and so the issuer) is known; the server's handler only runs after that.
  const provider = new Provider(issuer, {
    clients: options.clients.map(({ redirect_uris, ...client }) => ({
      ...client,
      redirect_uris: typeof redirect_uris === 'function' ? [LATER_REDIRECT_URI] : redirect_uris,
      grant_types: ['authorization_code'],
      response_types: ['code'],
    })),
    jwks: { keys: [{ ...signingKey, kid: 'test-signing-key', use: 'sig', alg: 'RS256' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    // Explicit lifetimes (seconds) keep oidc-provider from printing a notice for each default.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    claims: withMoreClaims({
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    }, options.claims ?? {}),
    ...(options.routes === undefined ? {} : { routes: options.routes }),
    // Most providers (Cognito among them) put the profile in the ID token too.
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${issuerPath}/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      if (account === undefined) return undefined;
      return {
        accountId: sub,
        claims: (use: string) => ({ ...account.claims, ...(use === 'userinfo' ? account.userinfoClaims : {}), sub }),
      };
    },
  });

  // oidc-provider's own recipe for redirect URIs it cannot list up front: replace the check, for the
  // clients whose URIs a function gives (the token endpoint then only compares with the code's).
  const laterRedirectUris = new Map(options.clients.flatMap((client) => (typeof client.redirect_uris === 'function' ? [[client.client_id, client.redirect_uris] as const] : [])));
  const { redirectUriAllowed } = provider.Client.prototype;
  provider.Client.prototype.redirectUriAllowed = function (this: OidcClient, redirectUri: string): boolean {
    const later = laterRedirectUris.get(this.clientId);
    return later === undefined ? redirectUriAllowed.call(this, redirectUri) : later().includes(redirectUri);
  };

  const handleOidcRequest = provider.callback();

  /** Logs the chosen account in and grants what the client asked for, with no page in between. */
  async function finishInteraction(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const oidc = provider;
    const details = await oidc.interactionDetails(req, res);
    const chosen = chosenLogins.get(uid) ?? (handle.nextLogin === undefined ? undefined : { login: handle.nextLogin });
    chosenLogins.delete(uid);
    if (chosen === undefined) throw new Error('the test provider was not told who signs in: set nextLogin or pass `as`');
    if ('deny' in chosen) {
      await oidc.interactionFinished(req, res, { error: 'access_denied', error_description: 'the person declined' }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new oidc.Grant({ accountId: chosen.login, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await oidc.interactionFinished(req, res, { login: { accountId: chosen.login }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  async function followAuthorization(authorizationUrl: URL | string, followOptions: { as?: TestLogin } = {}): Promise<URL> {
    const cookies = new Map<string, string>();
    let current = new URL(authorizationUrl);
    for (let hop = 0; hop < 10; hop += 1) {
      // The first address off the provider is the redirect back to the client.
      if (current.origin !== origin) return current;
      const interaction = /\/interaction\/([^/?]+)$/.exec(current.pathname);
      if (interaction !== null && followOptions.as !== undefined) chosenLogins.set(interaction[1]!, followOptions.as);
      const cookieHeader = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
      const response = await fetch(current, { redirect: 'manual', headers: cookieHeader === '' ? {} : { cookie: cookieHeader } });
      keepCookies(cookies, response.headers.getSetCookie());
      const location = response.headers.get('location');
      if (location === null) {
        throw new Error(`the test provider stopped at ${current.href} with HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`);
      }
      await response.body?.cancel();
      current = new URL(location, current);
    }
    throw new Error('the test provider redirected more than 10 times');
  }

  /**
   * The token endpoint's answer with its ID token's `iss` replaced and the token signed again: the
   * answer is held back from `res` until then, so the client sees only the re-signed token.
   */
  function reissueIdToken(res: ServerResponse, iss: string): void {
    const chunks: Buffer[] = [];
    const end = res.end.bind(res);
    res.write = ((chunk: string | Uint8Array) => {
      chunks.push(Buffer.from(chunk));
      return true;
    }) as typeof res.write;
    res.end = ((chunk?: string | Uint8Array | (() => void)) => {
      if (chunk !== undefined && typeof chunk !== 'function') chunks.push(Buffer.from(chunk));
      const text = Buffer.concat(chunks).toString('utf8');
      void resigned(text, iss).then((body) => {
        res.setHeader('content-length', Buffer.byteLength(body));
        end(body);
      });
      return res;
    }) as typeof res.end;
  }

  async function resigned(text: string, iss: string): Promise<string> {
    let answer: Record<string, unknown>;
    try {
      answer = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return text;
    }
    if (typeof answer.id_token !== 'string') return text;
    const header = decodeProtectedHeader(answer.id_token);
    const payload = { ...decodeJwt(answer.id_token), iss };
    answer.id_token = await new SignJWT(payload).setProtectedHeader({ ...header, alg: 'RS256' }).sign(privateKey);
    return JSON.stringify(answer);
  }

  const handle: TestOidcProvider = {
    issuer,
    nextLogin: undefined,
    idTokenIssuer: undefined,
    followAuthorization,
    now: () => new Date(),
    signIdToken: ({ clientId, sub, claims = {} }) => {
      const now = Math.floor(handle.now().getTime() / 1000);
      const payload = { iss: issuer, aud: clientId, sub, iat: now, exp: now + 600, ...accounts.get(sub)?.claims, ...claims };
      return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'test-signing-key', typ: 'JWT' }).sign(privateKey);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
  return handle;
}

/** The usual claims of each scope, with a provider's own added (and scopes of its own). */
function withMoreClaims(usual: Record<string, string[]>, more: Record<string, string[]>): Record<string, string[]> {
  const claims = { ...usual };
  for (const [scope, names] of Object.entries(more)) claims[scope] = [...new Set([...(claims[scope] ?? []), ...names])];
  return claims;
}

/** A tiny cookie jar for one browser visit: one host, so paths and domains are ignored. */
function keepCookies(jar: Map<string, string>, setCookies: string[]): void {
  for (const setCookie of setCookies) {
    const [pair = '', ...attributes] = setCookie.split(';');
    const separator = pair.indexOf('=');
    const name = pair.slice(0, separator).trim();
    const value = pair.slice(separator + 1).trim();
    const expired = attributes.some((attribute) => {
      const [key = '', raw = ''] = attribute.split('=');
      return (key.trim().toLowerCase() === 'expires' && Date.parse(raw) <= Date.now()) || (key.trim().toLowerCase() === 'max-age' && Number(raw) <= 0);
    });
    if (value === '' || expired) jar.delete(name);
    else jar.set(name, value);
  }
}
