/**
 * Facebook Login, as allauth's `facebook` provider. Shapes follow
 * https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow (the dialog, the
 * code exchange, and debug_token for a token the client brings), and
 * https://developers.facebook.com/docs/graph-api/securing-requests (appsecret_proof on every Graph
 * call, on {graph_api_url}/me or the app's `profile_url` when it gives one). The address is never
 * vouched for: Facebook's `verified` says the account is, not the address.
 *
 * Besides the redirect, a mobile app that ran Facebook's own SDK may hand over the access token it
 * got (the headless API's provider token): it is checked with debug_token to be valid and issued to
 * this app, since a token another app obtained would otherwise sign its holder in here.
 */
import { createHmac } from 'node:crypto';
import { anEndpoint, aTextList, type SettingReader } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { checkedUid, oauth2ProviderKind, type MappedProfile } from '../oauth2.js';
import { clip, readJsonObject, requestOnce } from '../oauth2-requests.js';
import { textOf } from '../profile-fields.js';
import { ProviderError, type ProviderHttp, type ProviderProfile, type RedirectProvider } from '../provider.js';
import { secureUrl } from '../secure-url.js';

/** The Graph API version allauth currently defaults to; a project pins its own with `version`. */
export const FACEBOOK_GRAPH_VERSION = 'v19.0';
const DEFAULT_FIELDS = ['id', 'email', 'name', 'first_name', 'last_name'];

const aVersion: SettingReader<string> = (value, key) =>
  typeof value === 'string' && /^v\d{1,3}\.\d{1,3}$/.test(value) ? { value } : { problem: `${key} must be a Graph API version such as "${FACEBOOK_GRAPH_VERSION}"` };

/** The Graph API's base for an app: `graph_api_url` whole, else graph.facebook.com at the app's version. */
function graphApiUrl(settings: Readonly<Record<string, unknown>>): string {
  if (typeof settings.graph_api_url === 'string') return settings.graph_api_url.replace(/\/+$/, '');
  return `https://graph.facebook.com/${typeof settings.version === 'string' ? settings.version : FACEBOOK_GRAPH_VERSION}`;
}

function fieldsOf(settings: Readonly<Record<string, unknown>>): string {
  return Array.isArray(settings.fields) ? settings.fields.join(',') : DEFAULT_FIELDS.join(',');
}

/** The Graph call's proof that it comes from the app's server: HMAC-SHA256 of the access token keyed by the app secret, in hex. */
export function appsecretProof(accessToken: string, appSecret: string): string {
  return createHmac('sha256', appSecret).update(accessToken, 'utf8').digest('hex');
}

/**
 * The person's Graph URL for a token, with the fields and the proof: the app's `profile_url` when it
 * gives one (a proxy, a test server; its own query kept), else {graph_api_url}/me. The proof goes
 * on either: Graph refuses a call without it when the app requires it, and a proxy passes it on.
 */
function meUrl(profileUrl: string | undefined, graphUrl: string, fields: string, accessToken: string, secret: string): URL {
  const url = new URL(profileUrl ?? `${graphUrl}/me`);
  url.searchParams.set('fields', fields);
  url.searchParams.set('appsecret_proof', appsecretProof(accessToken, secret));
  return url;
}

function mapProfile(json: Record<string, unknown>): MappedProfile {
  const email = textOf(json.email);
  return {
    uid: json.id,
    emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
    data: { email, name: textOf(json.name), firstName: textOf(json.first_name), lastName: textOf(json.last_name) },
  };
}

const base = oauth2ProviderKind({
  type: 'facebook',
  name: 'Facebook',
  authorizeUrl: 'https://www.facebook.com/{version}/dialog/oauth',
  accessTokenUrl: '{graph_api_url}/oauth/access_token',
  defaultScope: ['email', 'public_profile'],
  settingsReaders: { version: aVersion, graph_api_url: anEndpoint, fields: aTextList },
  // `fields` and `profile_url` are no placeholders: fetchProfile is given these values, not the
  // app's settings (profile_url is checked by the base's reader, as every provider's is).
  endpointValues: (settings) => ({
    version: typeof settings.version === 'string' ? settings.version : FACEBOOK_GRAPH_VERSION,
    graph_api_url: graphApiUrl(settings),
    fields: fieldsOf(settings),
    ...(typeof settings.profile_url === 'string' ? { profile_url: settings.profile_url } : {}),
  }),
  async fetchProfile({ accessToken, requests, values, client }) {
    const url = meUrl(values.profile_url, values.graph_api_url!, values.fields!, accessToken, client.secret);
    return readJsonObject('facebook', 'the profile', await requests.getJson(url));
  },
  profile: mapProfile,
});

/** A Graph GET with `bearer` in the Authorization header (never in the URL): its JSON object, or ProviderError('failed'). */
async function graphGet(appId: string, step: string, url: URL, bearer: string, http: ProviderHttp): Promise<Record<string, unknown>> {
  const target = secureUrl(url.toString());
  if (target === undefined) throw new ProviderError('failed', `${appId}: the Graph API URL for the ${step} is not https`);
  const answer = await requestOnce(appId, step, target, { method: 'GET', headers: { accept: 'application/json', authorization: `Bearer ${bearer}` } }, http);
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    throw new ProviderError('failed', `${appId}: the ${step} at ${answer.where} did not answer with JSON (HTTP ${answer.status})`);
  }
  if (answer.status < 200 || answer.status > 299) {
    // Graph's errors: {"error": {"message", "type", "code", "fbtrace_id"}}.
    const message = textOf((json as { error?: { message?: unknown } } | null)?.error?.message);
    throw new ProviderError('failed', `${appId}: the ${step} at ${answer.where} answered HTTP ${answer.status} (${clip(message ?? 'no message')})`);
  }
  return readJsonObject(appId, `the ${step}'s answer`, json);
}

/**
 * A client-held access token checked with debug_token (with the app's own token, `{app id}|{secret}`):
 * valid, issued to this app, and for the person /me then describes. Throws ProviderError('failed').
 */
async function verifyAccessToken(app: { id: string; clientId: string; secret: string; settings: Readonly<Record<string, unknown>> }, http: ProviderHttp, accessToken: string): Promise<ProviderProfile> {
  const fail = (message: string) => new ProviderError('failed', `${app.id}: ${message}`);
  const debugUrl = new URL(`${graphApiUrl(app.settings)}/debug_token`);
  debugUrl.searchParams.set('input_token', accessToken);
  const debug = await graphGet(app.id, 'token inspection', debugUrl, `${app.clientId}|${app.secret}`, http);
  const data = readJsonObject(app.id, "debug_token's data", debug.data);
  if (data.is_valid !== true) throw fail('debug_token says the access token is not valid');
  const appId = textOf(data.app_id);
  if (appId !== app.clientId) throw fail(`the access token was issued to app ${clip(appId ?? 'none')}, not to ${app.clientId}`);
  const json = await graphGet(app.id, 'profile request', meUrl(typeof app.settings.profile_url === 'string' ? app.settings.profile_url : undefined, graphApiUrl(app.settings), fieldsOf(app.settings), accessToken, app.secret), accessToken, http);
  const mapped = mapProfile(json);
  const uid = checkedUid(app.id, mapped.uid);
  if (data.user_id !== undefined && textOf(data.user_id) !== uid) throw fail('debug_token and /me name different people');
  return { uid, emails: mapped.emails, data: mapped.data, extraData: json };
}

export const facebookProviderKind: ProviderKind = {
  ...base,
  build(app, context) {
    const provider = base.build(app, context) as RedirectProvider;
    return { ...provider, verifyAccessToken: (accessToken: string) => verifyAccessToken(app, context.http, accessToken) };
  },
};
