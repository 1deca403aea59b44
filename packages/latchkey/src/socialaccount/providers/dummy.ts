/**
 * allauth's `dummy` provider: a stand-in identity provider for development and tests, whose
 * "authorization server" is a page of the site itself (dummy_authenticate, served by
 * http/pages/dummy-provider.ts). A developer types who they are (an id, an address, whether it is
 * verified, a name) and the page sends the browser back to the callback with a code that carries
 * that profile, signed with a key derived from SECRET_KEY. It goes through the whole social
 * pipeline (state, callback, signup, email verification, MFA) without any network.
 *
 * It signs anyone in as anyone, by design: it refuses to exist when ENVIRONMENT is production.
 */
import type { Environment } from '../../config/settings.js';
import { latchkeyUrls, urlFor } from '../../config/url-names.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { constantTimeEqual, randomToken } from '../../core/crypto.js';
import { LatchkeyError } from '../../core/errors.js';
import { signValue, unsignValue } from '../../core/signing.js';
import { checkSettings } from './app-settings.js';
import type { ProviderKind } from './kind.js';
import { checkedUid, readAuthorizationCallback } from './oauth2.js';
import { ProviderError, type ProviderEmail, type ProviderProfile, type RedirectProvider } from './provider.js';

/** A code is good for as long as a sign-in's state (flows' SIGN_IN_STATE_SECONDS): the form may sit open a while. */
const CODE_LIFETIME_SECONDS = 10 * 60;

/** The signing purpose: a code can never pass for any other signed value of the site, nor one for a code. */
const CODE_PURPOSE = 'socialaccount-dummy-code';

/** core/signing.ts signs values of at most 2048 base64url characters: 1536 bytes of JSON. */
const MAX_GRANT_BYTES = 1536;

/** Who the developer said they are on the dummy page. */
export interface DummyPerson {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string;
}

/** What a code vouches for: the person, for one sign-in (its state) and one callback. */
export interface DummyGrant {
  person: DummyPerson;
  state: string;
  redirectUri: string;
}

export interface DummyProviderOptions {
  environment: Environment;
  /** SITE_URL: the dummy page lives on the site itself. */
  siteUrl: string;
  /** The path of the page that plays the provider's authorization endpoint (dummy_authenticate), as this site links it. */
  authenticatePath?: string;
  /** SECRET_KEY: the codes are signed with a key derived from it. */
  secretKey: string;
  /** The codes' expiry is read on it; the system clock unless a test gives its own. */
  clock?: Clock;
  /** The id in URLs and social accounts; 'dummy' unless given (an app's provider_id). */
  id?: string;
  name?: string;
}

/** Throws LatchkeyError('configuration_invalid') in production, where a provider that vouches for anyone must not exist. */
export function refuseDummyProviderInProduction(environment: Environment): void {
  if (environment === 'production') {
    throw new LatchkeyError(
      'configuration_invalid',
      'The dummy social provider signs anyone in as anyone: it is for development and tests only, and ENVIRONMENT is production. Remove the dummy app from SOCIALACCOUNT_PROVIDERS.',
    );
  }
}

/** The code the dummy page gives the callback. Throws LatchkeyError('invalid_input') when the grant is too long to sign. */
export function issueDummyCode(secretKey: string, grant: DummyGrant, now: Date): string {
  const json = JSON.stringify({ person: grant.person, state: grant.state, redirectUri: grant.redirectUri });
  if (Buffer.byteLength(json, 'utf8') > MAX_GRANT_BYTES) throw new LatchkeyError('invalid_input', 'The profile entered is too long.');
  return signValue(secretKey, CODE_PURPOSE, json, now);
}

/** The grant a code carries, or undefined for a forged, altered, expired or malformed one. */
export function readDummyCode(secretKey: string, code: string, now: Date): DummyGrant | undefined {
  const json = unsignValue(secretKey, CODE_PURPOSE, code, CODE_LIFETIME_SECONDS, now);
  if (json === undefined) return undefined;
  const value = JSON.parse(json) as { person?: Partial<DummyPerson>; state?: unknown; redirectUri?: unknown };
  const person = value.person;
  // Signed by us, so well-formed unless the format changed under a code in flight.
  if (
    typeof value.state !== 'string' || typeof value.redirectUri !== 'string' || typeof person !== 'object' || person === null
    || typeof person.id !== 'string' || typeof person.email !== 'string' || typeof person.emailVerified !== 'boolean' || typeof person.name !== 'string'
  ) return undefined;
  return { person: { id: person.id, email: person.email, emailVerified: person.emailVerified, name: person.name }, state: value.state, redirectUri: value.redirectUri };
}

/**
 * The registry's entry: settings apps only (never a database row, which would outlive the
 * environment it was added in), refused at start-up in production. It reads no settings of its
 * own; those every kind honours (hidden, ...) are checked.
 */
export const dummyProviderKind: ProviderKind = {
  id: 'dummy',
  name: 'Dummy',
  storable: false,
  checkSettings: (settings) => checkSettings('dummy', settings, { readers: {} }),
  checkEnvironment: (settings) => refuseDummyProviderInProduction(settings.ENVIRONMENT),
  build: (app, { settings, clock }) =>
    dummyProvider({
      environment: settings.ENVIRONMENT,
      siteUrl: settings.SITE_URL,
      authenticatePath: latchkeyUrls(settings).urlFor('dummy_authenticate'),
      secretKey: settings.SECRET_KEY,
      clock,
      id: app.id,
      name: app.name,
    }),
};

/** The dummy provider. Throws LatchkeyError('configuration_invalid') in production. */
export function dummyProvider(options: DummyProviderOptions): RedirectProvider {
  refuseDummyProviderInProduction(options.environment);
  const id = options.id ?? 'dummy';
  const clock = options.clock ?? systemClock;
  const site = new URL(options.siteUrl);
  const authenticatePath = options.authenticatePath ?? urlFor('dummy_authenticate');
  const fail = (message: string) => new ProviderError('failed', `${id}: ${message}`);

  return {
    protocol: 'oauth2',
    id,
    type: 'dummy',
    name: options.name ?? 'Dummy',

    authorizationOrigin() {
      return Promise.resolve(site.origin);
    },

    authorizationUrl({ redirectUri, state }) {
      const url = new URL(authenticatePath, site);
      url.searchParams.set('state', state);
      url.searchParams.set('redirect_uri', redirectUri);
      return Promise.resolve({ url, pending: {} });
    },

    completeAuthorization({ callbackUrl, redirectUri, expectedState }) {
      // Checked inside the promise, so that a refusal rejects it rather than throwing at the call.
      return Promise.resolve().then(() => {
        const code = readAuthorizationCallback(id, callbackUrl, expectedState);
        const grant = readDummyCode(options.secretKey, code, clock.now());
        if (grant === undefined) throw fail('the code was not issued by the dummy page of this site, or has expired');
        // The state in the URL was checked; the one in the code binds it to this sign-in, so a code
        // made for one sign-in (another browser's, say) cannot finish another.
        if (!constantTimeEqual(grant.state, expectedState)) throw fail("the code was issued for another sign-in's state");
        if (grant.redirectUri !== redirectUri) throw fail(`the code was issued for the callback ${grant.redirectUri}, not ${redirectUri}`);
        // A dummy sign-in has no token at a provider; an opaque random one exercises token storage as a real provider would.
        return { profile: profileOf(id, grant.person), tokens: { accessToken: randomToken() } };
      });
    },
  };
}

function profileOf(id: string, person: DummyPerson): ProviderProfile {
  const email = person.email.trim();
  const name = person.name.trim();
  const emails: ProviderEmail[] = email === '' ? [] : [{ email, verified: person.emailVerified, primary: true }];
  return {
    uid: checkedUid(id, person.id),
    emails,
    data: { email: email === '' ? undefined : email, name: name === '' ? undefined : name },
    extraData: { id: person.id, email: person.email, email_verified: person.emailVerified, name: person.name },
  };
}
