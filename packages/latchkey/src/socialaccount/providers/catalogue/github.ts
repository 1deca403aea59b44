/**
 * GitHub (and GitHub Enterprise Server), as allauth's `github` provider. Shapes follow
 * https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps (the web
 * application flow: authorize, the token answer form-encoded unless JSON is asked for, errors such
 * as bad_verification_code in a 200) and https://docs.github.com/en/rest/users/emails (the
 * address list with `primary` and `verified`).
 *
 * Settings: `github_url` (GITHUB_URL provider-wide) for an Enterprise server, whose API is then at
 * {github_url}/api/v3; `api_url` to replace the API base whole; `query_email` (QUERY_EMAIL), true
 * unless set false, asks for the user:email scope, which the address list needs (allauth follows
 * ACCOUNT_EMAIL_REQUIRED; a Latchkey account has an address, and a verified one spares a mail). GitHub vouches for the addresses its
 * list marks verified; the public `email` of /user alone is never taken as verified.
 */
import { aBoolean, anEndpoint } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind, type OAuth2ProviderDescription, type ProfileInput } from '../oauth2.js';
import { readJsonObject } from '../oauth2-requests.js';
import { isVouchedFor, textOf } from '../profile-fields.js';
import type { ProviderEmail } from '../provider.js';

type Settings = Readonly<Record<string, unknown>>;

const GITHUB_COM = 'https://github.com';

function trimmed(url: string): string {
  return url.replace(/\/+$/, '');
}

/** github.com's API has a host of its own; an Enterprise server serves it under /api/v3 (allauth's rule). */
function endpointValues(settings: Settings): Record<string, string> {
  const githubUrl = trimmed(typeof settings.github_url === 'string' ? settings.github_url : GITHUB_COM);
  const apiUrl = typeof settings.api_url === 'string' ? settings.api_url : githubUrl === GITHUB_COM ? 'https://api.github.com' : `${githubUrl}/api/v3`;
  const values: Record<string, string> = { github_url: githubUrl, api_url: trimmed(apiUrl) };
  // fetchProfile reads the person from profile_url when the app replaces it, as the base would.
  if (typeof settings.profile_url === 'string') values.profile_url = settings.profile_url;
  return values;
}

/** /user, then the address list; without the user:email scope the list answers 404 and the public address is all there is. */
async function fetchProfile({ requests, values }: ProfileInput): Promise<Record<string, unknown>> {
  const user = readJsonObject('github', 'the /user answer', await requests.getJson(values.profile_url ?? `${values.api_url}/user`));
  const emails = await requests.getJson(`${values.api_url}/user/emails`, { optional: true });
  return { ...user, emails: Array.isArray(emails) ? emails : [] };
}

function addressesOf(json: Record<string, unknown>): ProviderEmail[] {
  const listed: ProviderEmail[] = [];
  for (const entry of json.emails as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { email, verified, primary } = entry as Record<string, unknown>;
    const address = textOf(email);
    if (address !== undefined) listed.push({ email: address, verified: isVouchedFor(verified), primary: primary === true });
  }
  // The public address, when the list does not hold it (no user:email scope), is taken unverified.
  const publicAddress = textOf(json.email);
  if (publicAddress !== undefined && !listed.some((entry) => entry.email.toLowerCase() === publicAddress.toLowerCase())) {
    listed.push({ email: publicAddress, verified: false, primary: !listed.some((entry) => entry.primary) });
  }
  return listed;
}

function githubDescription(defaultScope: readonly string[]): OAuth2ProviderDescription & { name: string } {
  return {
    type: 'github',
    name: 'GitHub',
    authorizeUrl: '{github_url}/login/oauth/authorize',
    accessTokenUrl: '{github_url}/login/oauth/access_token',
    fetchProfile,
    endpointValues,
    settingsReaders: { github_url: anEndpoint, api_url: anEndpoint, query_email: aBoolean },
    profileHeaders: { accept: 'application/vnd.github+json' },
    defaultScope,
    profile(json) {
      const emails = addressesOf(json);
      const { emails: _list, ...extraData } = json;
      const primary = emails.find((entry) => entry.primary) ?? emails[0];
      return { uid: json.id, emails, data: { email: primary?.email, username: textOf(json.login), name: textOf(json.name) }, extraData };
    },
  };
}

const withoutEmailScope = oauth2ProviderKind(githubDescription([]));
const withEmailScope = oauth2ProviderKind(githubDescription(['user:email']));

/** The scope depends on the app's query_email, so the kind picks one of two descriptions per app. */
export const githubProviderKind: ProviderKind = {
  id: withoutEmailScope.id,
  name: withoutEmailScope.name,
  checkSettings: (settings) => withoutEmailScope.checkSettings(settings),
  build: (app, context) => (app.settings.query_email === false ? withoutEmailScope : withEmailScope).build(app, context),
};
