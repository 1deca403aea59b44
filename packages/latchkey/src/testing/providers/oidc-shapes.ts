/**
 * The named OpenID Connect providers (google, slack, okta, auth0, keycloak, salesforce,
 * linkedin_oauth2 and linkedin) each in its documented shape: one test OpenID provider (testing/oidc-provider.ts)
 * per provider, its issuer shaped as the provider's (a path, a trailing slash), its endpoints at the
 * provider's paths beneath it, and its people carrying the provider's claims as its documentation
 * shows them. Each shape names the page it follows. Only the host differs: every shape is served on
 * 127.0.0.1, and the app's settings point the provider at it through its own keys.
 *
 * Imported by path, as oidc-provider.ts is.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestOidcProvider, type TestOidcClient, type TestOidcProvider, type TestOidcProviderOptions } from '../oidc-provider.js';

/** A person at the provider: the `sub`, the claims it releases, and what Latchkey should make of them. */
export interface ShapedPerson {
  sub: string;
  claims: Record<string, unknown>;
  email: string;
  /** Whether the provider vouches for the address, by its own rule. */
  verified: boolean;
  name: string;
}

export interface OidcShape {
  type: string;
  /** The documentation page the shape follows. */
  docs: string;
  server: Pick<TestOidcProviderOptions, 'issuerPath' | 'issuerTrailingSlash' | 'routes' | 'claims'>;
  /** The app's settings that point the provider at the test issuer, through the provider's own keys. */
  settings: (issuer: string) => Record<string, unknown>;
  /** The person whose address the provider vouches for, and the one whose address it does not. */
  people: { verified: ShapedPerson; unverified: ShapedPerson };
  /** The provider's own claims that the social account keeps (its extra_data's userinfo). */
  keeps: Record<string, unknown>;
}

/** The social app's client at every shape. */
export const SHAPE_CLIENT = { id: 'latchkey-web', secret: 'shape-secret' };
export const MOBILE_CLIENT = { id: 'latchkey-mobile', secret: 'mobile-secret' };
export const shapeCallback = (type: string): string => `http://testserver/accounts/${type}/login/callback/`;

// https://developers.google.com/identity/openid-connect/openid-connect ("An ID token's payload",
// "Obtaining user profile information") and https://accounts.google.com/.well-known/openid-configuration:
// issuer https://accounts.google.com, sub a decimal string, hd the Google Workspace domain, email_verified
// a boolean. Google's token, userinfo and keys live on other hosts (oauth2.googleapis.com,
// openidconnect.googleapis.com, www.googleapis.com); their paths are kept beneath the issuer.
const GOOGLE: OidcShape = {
  type: 'google',
  docs: 'https://developers.google.com/identity/openid-connect/openid-connect',
  server: {
    routes: { authorization: '/o/oauth2/v2/auth', token: '/token', userinfo: '/v1/userinfo', jwks: '/oauth2/v3/certs' },
    claims: { openid: ['hd'], profile: ['picture', 'locale'] },
  },
  settings: (issuer) => ({ server_url: issuer }),
  people: {
    verified: {
      sub: '110169484474386276334',
      claims: { email: 'ada@lovelace.example', email_verified: true, hd: 'lovelace.example', name: 'Ada Lovelace', given_name: 'Ada', family_name: 'Lovelace', picture: 'https://lh3.googleusercontent.com/a/ada', locale: 'en' },
      email: 'ada@lovelace.example',
      verified: true,
      name: 'Ada Lovelace',
    },
    unverified: {
      sub: '110169484474386276335',
      claims: { email: 'bob@elsewhere.example', email_verified: false, name: 'Bob Babbage', given_name: 'Bob', family_name: 'Babbage', locale: 'en' },
      email: 'bob@elsewhere.example',
      verified: false,
      name: 'Bob Babbage',
    },
  },
  keeps: { hd: 'lovelace.example' },
};

// https://api.slack.com/authentication/sign-in-with-slack ("Response" of openid.connect.userInfo) and
// https://slack.com/.well-known/openid-configuration: issuer https://slack.com, endpoints
// /openid/connect/authorize, /api/openid.connect.token, /api/openid.connect.userInfo,
// /openid/connect/keys; sub is the Slack user id, repeated in https://slack.com/user_id, with the
// workspace in https://slack.com/team_id.
const SLACK: OidcShape = {
  type: 'slack',
  docs: 'https://api.slack.com/authentication/sign-in-with-slack',
  server: {
    routes: { authorization: '/openid/connect/authorize', token: '/api/openid.connect.token', userinfo: '/api/openid.connect.userInfo', jwks: '/openid/connect/keys' },
    claims: {
      openid: ['https://slack.com/user_id', 'https://slack.com/team_id'],
      email: ['date_email_verified'],
      profile: ['picture', 'locale', 'https://slack.com/team_name', 'https://slack.com/team_domain'],
    },
  },
  settings: (issuer) => ({ server_url: issuer }),
  people: {
    verified: {
      sub: 'U0R7JM',
      claims: {
        'https://slack.com/user_id': 'U0R7JM', 'https://slack.com/team_id': 'T0R7GR', email: 'krane@slack-corp.example', email_verified: true, date_email_verified: 1622128723,
        name: 'krane', given_name: 'Bront', family_name: 'Labradoodle', picture: 'https://secure.gravatar.com/avatar/krane.png', locale: 'en-US',
        'https://slack.com/team_name': 'kraneflannel', 'https://slack.com/team_domain': 'kraneflannel',
      },
      email: 'krane@slack-corp.example',
      verified: true,
      name: 'krane',
    },
    unverified: {
      sub: 'U0R7JN',
      claims: { 'https://slack.com/user_id': 'U0R7JN', 'https://slack.com/team_id': 'T0R7GR', email: 'new@slack-corp.example', email_verified: false, name: 'newcomer', locale: 'en-US' },
      email: 'new@slack-corp.example',
      verified: false,
      name: 'newcomer',
    },
  },
  keeps: { 'https://slack.com/user_id': 'U0R7JM', 'https://slack.com/team_id': 'T0R7GR' },
};

// https://developer.okta.com/docs/reference/api/oidc/ (the org authorization server: issuer
// https://{yourOktaDomain}, endpoints /oauth2/v1/authorize, /token, /userinfo, /keys; the /userinfo
// response): sub is the user's immutable Okta id, preferred_username the login, which can change.
const OKTA: OidcShape = {
  type: 'okta',
  docs: 'https://developer.okta.com/docs/reference/api/oidc/',
  server: {
    routes: { authorization: '/oauth2/v1/authorize', token: '/oauth2/v1/token', userinfo: '/oauth2/v1/userinfo', jwks: '/oauth2/v1/keys' },
    claims: { profile: ['nickname', 'middle_name', 'zoneinfo', 'locale', 'updated_at'] },
  },
  settings: (issuer) => ({ okta_base_url: issuer }),
  people: {
    verified: {
      sub: '00uid4BxXw6I6TV4m0g3',
      claims: {
        name: 'John Doe', nickname: 'Jimmy', given_name: 'John', middle_name: 'James', family_name: 'Doe', zoneinfo: 'America/Los_Angeles', locale: 'en-US',
        updated_at: 1311280970, email: 'john.doe@example.com', email_verified: true, preferred_username: 'john.doe@example.com',
      },
      email: 'john.doe@example.com',
      verified: true,
      name: 'John Doe',
    },
    unverified: {
      sub: '00uid4BxXw6I6TV4m0g4',
      claims: { name: 'Jane Roe', given_name: 'Jane', family_name: 'Roe', email: 'jane.roe@example.com', email_verified: false, preferred_username: 'jane.roe@example.com' },
      email: 'jane.roe@example.com',
      verified: false,
      name: 'Jane Roe',
    },
  },
  keeps: { preferred_username: 'john.doe@example.com' },
};

// https://auth0.com/docs/get-started/applications/configure-applications-with-oidc-discovery (issuer
// https://{yourDomain}/, with its trailing slash) and https://auth0.com/docs/api/authentication#user-profile
// (/userinfo's response); endpoints /authorize, /oauth/token, /userinfo, /.well-known/jwks.json; sub
// is the connection and the user id, such as auth0|5f7c8ec7c33c6c004bbafe82.
const AUTH0: OidcShape = {
  type: 'auth0',
  docs: 'https://auth0.com/docs/api/authentication#user-profile',
  server: {
    issuerTrailingSlash: true,
    routes: { authorization: '/authorize', token: '/oauth/token', userinfo: '/userinfo', jwks: '/.well-known/jwks.json' },
    claims: { profile: ['nickname', 'picture', 'updated_at'] },
  },
  settings: (issuer) => ({ auth0_url: issuer }),
  people: {
    verified: {
      sub: 'auth0|5f7c8ec7c33c6c004bbafe82',
      claims: { name: 'Jane Josephine Doe', given_name: 'Jane', family_name: 'Doe', nickname: 'JJ', preferred_username: 'j.doe', picture: 'http://exampleco.com/janedoe/me.jpg', email: 'janedoe@exampleco.example', email_verified: true, updated_at: '1556845729' },
      email: 'janedoe@exampleco.example',
      verified: true,
      name: 'Jane Josephine Doe',
    },
    unverified: {
      sub: 'auth0|5f7c8ec7c33c6c004bbafe83',
      claims: { name: 'Jim Doe', nickname: 'jim', email: 'jim@exampleco.example', email_verified: false },
      email: 'jim@exampleco.example',
      verified: false,
      name: 'Jim Doe',
    },
  },
  keeps: { nickname: 'JJ' },
};

// https://www.keycloak.org/docs/latest/securing_apps/#_oidc (issuer {server}/realms/{realm};
// endpoints /realms/{realm}/protocol/openid-connect/auth, /token, /userinfo, /certs): sub is the
// user's UUID, with preferred_username and email_verified in userinfo.
const KEYCLOAK_REALM = 'staff';
const KEYCLOAK: OidcShape = {
  type: 'keycloak',
  docs: 'https://www.keycloak.org/docs/latest/securing_apps/#_oidc',
  server: {
    issuerPath: `/realms/${KEYCLOAK_REALM}`,
    routes: { authorization: '/protocol/openid-connect/auth', token: '/protocol/openid-connect/token', userinfo: '/protocol/openid-connect/userinfo', jwks: '/protocol/openid-connect/certs' },
  },
  settings: (issuer) => ({ keycloak_url: new URL(issuer).origin, keycloak_realm: KEYCLOAK_REALM }),
  people: {
    verified: {
      sub: 'f1a4c3b2-6d7e-4c1a-9b8f-0e2d3c4b5a69',
      claims: { name: 'Grace Hopper', given_name: 'Grace', family_name: 'Hopper', preferred_username: 'grace', email: 'grace@navy.example', email_verified: true },
      email: 'grace@navy.example',
      verified: true,
      name: 'Grace Hopper',
    },
    unverified: {
      sub: 'f1a4c3b2-6d7e-4c1a-9b8f-0e2d3c4b5a70',
      claims: { name: 'Howard Aiken', preferred_username: 'howard', email: 'howard@navy.example', email_verified: false },
      email: 'howard@navy.example',
      verified: false,
      name: 'Howard Aiken',
    },
  },
  keeps: { preferred_username: 'grace' },
};

// https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_userinfo_endpoint.htm (the
// UserInfo response: sub the identity URL, user_id, organization_id, email_verified) and
// https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_openid_discovery_endpoint.htm
// (endpoints /services/oauth2/authorize, /token, /userinfo, keys at /id/keys).
const SALESFORCE: OidcShape = {
  type: 'salesforce',
  docs: 'https://help.salesforce.com/s/articleView?id=sf.remoteaccess_using_userinfo_endpoint.htm',
  server: {
    routes: { authorization: '/services/oauth2/authorize', token: '/services/oauth2/token', userinfo: '/services/oauth2/userinfo', jwks: '/id/keys' },
    claims: { profile: ['user_id', 'organization_id', 'nickname', 'zoneinfo', 'active', 'user_type', 'language', 'locale', 'utcOffset'] },
  },
  settings: (issuer) => ({ instance_url: issuer }),
  people: {
    verified: {
      sub: 'https://login.salesforce.com/id/00Dx0000000A9y0EAC/005x0000000UnYmAAK',
      claims: {
        user_id: '005x0000000UnYmAAK', organization_id: '00Dx0000000A9y0EAC', preferred_username: 'admin@example.com', nickname: 'admin', name: 'Alan Van',
        email: 'admin@example.com', email_verified: true, given_name: 'Alan', family_name: 'Van', zoneinfo: 'America/Los_Angeles', active: true,
        user_type: 'STANDARD', language: 'en_US', locale: 'en_US', utcOffset: -28800000,
      },
      email: 'admin@example.com',
      verified: true,
      name: 'Alan Van',
    },
    unverified: {
      sub: 'https://login.salesforce.com/id/00Dx0000000A9y0EAC/005x0000000UnYnAAK',
      claims: { user_id: '005x0000000UnYnAAK', organization_id: '00Dx0000000A9y0EAC', name: 'Una Verified', email: 'una@example.com', email_verified: false, active: true },
      email: 'una@example.com',
      verified: false,
      name: 'Una Verified',
    },
  },
  keeps: { user_id: '005x0000000UnYmAAK', organization_id: '00Dx0000000A9y0EAC' },
};

// https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
// (issuer https://www.linkedin.com/oauth; /oauth/v2/authorization, /oauth/v2/accessToken,
// /oauth/openid/jwks; the userinfo response: sub, name, given_name, family_name, picture, locale,
// email, email_verified). LinkedIn's userinfo lives at https://api.linkedin.com/v2/userinfo; its path
// is kept beneath the issuer.
const LINKEDIN: OidcShape = {
  type: 'linkedin_oauth2',
  docs: 'https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2',
  server: {
    issuerPath: '/oauth',
    routes: { authorization: '/v2/authorization', token: '/v2/accessToken', userinfo: '/v2/userinfo', jwks: '/openid/jwks' },
    claims: { profile: ['picture', 'locale'] },
  },
  settings: (issuer) => ({ server_url: issuer }),
  people: {
    verified: {
      sub: '782bbtaQ',
      claims: { name: 'John Doe', given_name: 'John', family_name: 'Doe', picture: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/', locale: 'en-US', email: 'doe@email.example', email_verified: true },
      email: 'doe@email.example',
      verified: true,
      name: 'John Doe',
    },
    unverified: {
      sub: '782bbtaR',
      claims: { name: 'Mary Major', given_name: 'Mary', family_name: 'Major', locale: 'en-US', email: 'major@email.example', email_verified: false },
      email: 'major@email.example',
      verified: false,
      name: 'Mary Major',
    },
  },
  keeps: { picture: 'https://media.licdn-ei.com/dms/image/C5F03AQHqK8v7tB1HCQ/profile-displayphoto-shrink_100_100/0/' },
};

/** allauth's current LinkedIn setup (provider_id `linkedin`): the same OpenID Connect server as linkedin_oauth2. */
const LINKEDIN_OPENID_CONNECT: OidcShape = { ...LINKEDIN, type: 'linkedin' };

export const OIDC_SHAPES: readonly OidcShape[] = [GOOGLE, SLACK, OKTA, AUTH0, KEYCLOAK, SALESFORCE, LINKEDIN, LINKEDIN_OPENID_CONNECT];

/** The test OpenID provider in the shape, with the web client (and a mobile one, for token logins). */
export function startShapedProvider(shape: OidcShape, extraClients: TestOidcClient[] = []): Promise<TestOidcProvider> {
  const people = [shape.people.verified, shape.people.unverified];
  return startTestOidcProvider({
    ...shape.server,
    clients: [{ client_id: SHAPE_CLIENT.id, client_secret: SHAPE_CLIENT.secret, redirect_uris: [shapeCallback(shape.type)] }, ...extraClients],
    // The claims are the account's own objects: a test may change one (a login renamed) between sign-ins.
    accounts: people.map((person) => ({ sub: person.sub, claims: person.claims })),
  });
}

/**
 * A front door of the provider's at another address: what an app's endpoint overrides point at.
 * It answers an authorization request with a redirect to the provider's own, and forwards anything
 * else (the code exchange, userinfo, the keys) to the provider, recording the path of each request.
 */
export interface EndpointGateway {
  readonly origin: string;
  /** The paths asked of the gateway, in order (without the query). */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function startEndpointGateway(upstream: { origin: string; authorizationEndpoint: string }): Promise<EndpointGateway> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    forward(req, res).catch((error: unknown) => res.writeHead(502, { 'content-type': 'text/plain' }).end(String(error)));
  });
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    asked.push(url.pathname);
    if (url.pathname === '/authorize') {
      const target = new URL(upstream.authorizationEndpoint);
      target.search = url.search;
      res.writeHead(302, { location: target.href }).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)).map(([name, value]) => [name, String(value)]));
    const answer = await fetch(`${upstream.origin}${url.pathname.replace(/^\/[^/]+/, '')}${url.search}`, {
      method: req.method ?? 'GET',
      headers,
      redirect: 'manual',
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/octet-stream', 'content-length': body.length }).end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
