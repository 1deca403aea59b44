/**
 * The SAML tests' shared ground: an app ("Acme", organisation slug `acme`) whose identity provider
 * is the test IdP (testing/saml-idp.ts), and the trip a browser makes through it. The sign-in is
 * driven as a browser drives it: the button's POST on our login page, the AuthnRequest read from
 * the redirect, the IdP's answer POSTed to our ACS from the IdP's site (so without our cookies:
 * a SameSite=Lax session cookie stays behind on a cross-site POST), and the same-site GET of
 * acs/finish/ with the browser's cookies. Negative tests build their own responses and use the
 * lower-level steps (startSignIn, postToAcs). Imported by path, not from testing/index.ts.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { SettingValues } from '../config/settings.js';
import { samlUrls } from '../socialaccount/providers/saml/provider.js';
import type { TestLatchkey } from './latchkey.js';
import type { HeadlessTestClient } from './headless.js';
import { PageClient } from './pages.js';
import type { SamlPerson, SamlResponseOptions, TestSamlIdp } from './saml-idp.js';
import { readRedirectAuthnRequest } from './saml-messages.js';

/** The organisation slug (the app's client_id) in the app's URLs. */
export const SAML_ORG = 'acme';
export const SAML_APP_NAME = 'Acme SSO';
export const SAML_LOGIN = `/accounts/saml/${SAML_ORG}/login/`;

type Fields = Record<string, unknown>;
type ProvidersSetting = SettingValues['SOCIALACCOUNT_PROVIDERS'];

/**
 * Changes to the app. `settings` keys replace the default ones, except `idp` and `advanced`, whose
 * inner keys are merged into the defaults; an inner key given as undefined is removed (so
 * `{ idp: { sso_url: undefined, x509cert: undefined, metadata_url } }` switches to metadata mode).
 */
export interface SamlAppOverrides {
  name?: string;
  clientId?: string;
  settings?: Fields;
}

/** Keys whose value is undefined dropped, so that an override can remove a default. */
function defined(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** The one SAML app, as SOCIALACCOUNT_PROVIDERS takes it: the IdP's SSO URL and certificate given inline. */
export function samlApp(idp: TestSamlIdp, overrides: SamlAppOverrides = {}): ProvidersSetting {
  const { idp: idpOverrides, advanced: advancedOverrides, ...others } = overrides.settings ?? {};
  const settings = {
    ...others,
    idp: defined({ entity_id: idp.entityId, sso_url: idp.ssoUrl, slo_url: idp.sloUrl, x509cert: idp.keys.certificate, ...(idpOverrides as Fields | undefined) }),
    ...(advancedOverrides === undefined ? {} : { advanced: defined(advancedOverrides as Fields) }),
  };
  const app = { provider_id: idp.entityId, name: overrides.name ?? SAML_APP_NAME, client_id: overrides.clientId ?? SAML_ORG, settings };
  return { saml: { APPS: [app] } };
}

/** The app's absolute URLs on the test site (SITE_URL), and the SP entity id an unconfigured sp.entity_id gives. */
export function samlSiteUrls(latchkey: TestLatchkey, organization = SAML_ORG): ReturnType<typeof samlUrls> & { spEntityId: string } {
  const urls = samlUrls(latchkey.settings, organization);
  return { ...urls, spEntityId: urls.metadata };
}

export interface StartedSignIn {
  /** Our answer to the button: a redirect to the IdP's SSO URL with the AuthnRequest. */
  started: LightMyRequestResponse;
  /** Where it sent the browser. */
  redirect: URL;
  /** The AuthnRequest's ID, which the IdP's response names in InResponseTo. */
  requestId: string;
  relayState: string | undefined;
}

/** The button on our login page (a POST with `fields`, such as next or process), read as the IdP reads the request it leads to. */
export async function startSignIn(browser: PageClient, fields: Record<string, string> = {}, loginPath = SAML_LOGIN): Promise<StartedSignIn> {
  const started = await browser.post(loginPath, fields);
  const location = started.headers.location;
  if (started.statusCode !== 302 || location === undefined) throw new Error(`The SAML sign-in did not start: ${started.statusCode} ${started.body}`);
  const redirect = new URL(location);
  const samlRequest = redirect.searchParams.get('SAMLRequest');
  if (samlRequest === null) throw new Error(`The sign-in did not redirect with an AuthnRequest: ${location}`);
  // Read as an IdP reads it (testing/saml-messages.ts), not through the service provider's own code.
  const request = readRedirectAuthnRequest(redirect);
  return { started, redirect, requestId: request.id, relayState: request.relayState };
}

/** A browser of either kind: the pages' client, or the headless API's browser client (its cookie jar and app). */
export type SamlBrowser = PageClient | Pick<HeadlessTestClient, 'app' | 'cookies'>;

/** What the ACS and the finish answered: `finish` is absent when the ACS did not send the browser on. */
export interface AcsAnswer {
  acs: LightMyRequestResponse;
  finish?: LightMyRequestResponse;
}

export interface AcsPostOptions {
  organization?: string;
  /** The Origin header of the IdP's page; a made-up IdP's by default. */
  origin?: string;
}

function keepCookies(browser: SamlBrowser, response: LightMyRequestResponse): void {
  for (const cookie of response.cookies) {
    if (cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) browser.cookies.delete(cookie.name);
    else browser.cookies.set(cookie.name, cookie.value);
  }
}

/** A same-site GET with every cookie the browser has (through the pages' client where it is one, which waits for the mail a page sends). */
async function visit(browser: SamlBrowser, path: string): Promise<LightMyRequestResponse> {
  if (browser instanceof PageClient) return browser.get(path);
  const response = await browser.app.inject({ method: 'GET', url: path, headers: { host: 'testserver' }, cookies: Object.fromEntries(browser.cookies) });
  keepCookies(browser, response);
  return response;
}

/**
 * The IdP's page posting the response to our ACS, as the browser does it from the IdP's site:
 * no cookies of ours, no CSRF token, an Origin of the IdP's. The cookie the ACS sets for the
 * finish is kept in the browser's jar, and the finish is then fetched with every cookie it has.
 */
export async function postToAcsAndFinish(browser: SamlBrowser, samlResponseBase64: string, relayState?: string, options: AcsPostOptions = {}): Promise<AcsAnswer> {
  const organization = options.organization ?? SAML_ORG;
  const fields: Record<string, string> = { SAMLResponse: samlResponseBase64, ...(relayState === undefined ? {} : { RelayState: relayState }) };
  const acs = await browser.app.inject({
    method: 'POST',
    url: `/accounts/saml/${encodeURIComponent(organization)}/acs/`,
    payload: new URLSearchParams(fields).toString(),
    headers: { host: 'testserver', 'content-type': 'application/x-www-form-urlencoded', origin: options.origin ?? 'http://idp.example' },
  });
  keepCookies(browser, acs);
  const location = acs.headers.location;
  if (acs.statusCode !== 303 || location === undefined) return { acs };
  return { acs, finish: await visit(browser, location) };
}

/** postToAcsAndFinish's final answer: the finish's, or the ACS's own when it refused the post. */
export async function postToAcs(browser: SamlBrowser, samlResponseBase64: string, relayState?: string, options: AcsPostOptions = {}): Promise<LightMyRequestResponse> {
  const answer = await postToAcsAndFinish(browser, samlResponseBase64, relayState, options);
  return answer.finish ?? answer.acs;
}

/** The value of a hidden field of an HTML form, as a browser reads it (the entities the IdP escaped undone). */
function hiddenField(html: string, name: string): string | undefined {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'" };
  return match?.[1]?.replace(/&(amp|lt|gt|quot|apos);/g, (entity) => entities[entity]!);
}

/**
 * The real IdP's side of an SP-initiated sign-in: the browser follows our redirect to its /sso
 * (over HTTP, to the server on loopback), which answers for the person it was told is signed in
 * (idp.signInAs) with its auto-post page; the page's form goes to the ACS its action names.
 */
export async function throughIdpSso(browser: SamlBrowser, idpRedirect: URL): Promise<AcsAnswer & { action: string }> {
  const answer = await fetch(idpRedirect, { redirect: 'manual' });
  const page = await answer.text();
  if (answer.status !== 200) throw new Error(`The IdP refused the AuthnRequest: ${answer.status} ${page}`);
  const action = /<form method="post" action="([^"]+)">/.exec(page)?.[1];
  const samlResponse = hiddenField(page, 'SAMLResponse');
  if (action === undefined || samlResponse === undefined) throw new Error(`The IdP's page holds no form with a SAMLResponse: ${page}`);
  const organization = /\/accounts\/saml\/([^/]+)\/acs\/$/.exec(new URL(action).pathname)?.[1];
  if (organization === undefined) throw new Error(`The IdP posts to ${action}, which is no ACS URL of ours`);
  const posted = await postToAcsAndFinish(browser, samlResponse, hiddenField(page, 'RelayState'), { organization: decodeURIComponent(organization), origin: idpRedirect.origin });
  return { ...posted, action };
}

/** A response to `requestId` from the IdP for `person`, on the site's clock, to the site's ACS and SP entity id unless overridden. */
export function responseFor(latchkey: TestLatchkey, idp: TestSamlIdp, person: SamlPerson, requestId: string | undefined, overrides: Partial<SamlResponseOptions> = {}): string {
  const urls = samlSiteUrls(latchkey);
  return idp.responseBase64({
    acsUrl: urls.acs,
    audience: urls.spEntityId,
    person,
    now: latchkey.clock.now(),
    ...(requestId === undefined ? {} : { inResponseTo: requestId }),
    ...overrides,
  });
}

export interface SignedInThroughIdp extends AcsAnswer {
  started: StartedSignIn;
  requestId: string;
  /** The final answer: the finish's, or the ACS's when it refused. */
  response: LightMyRequestResponse;
}

/**
 * A whole SP-initiated sign-in: the button, the IdP's signed answer for `person` to that request
 * (`responseOverrides` change it, say a later `now` or another audience), the ACS and the finish.
 */
export async function signInThroughIdp(
  latchkey: TestLatchkey,
  browser: PageClient,
  idp: TestSamlIdp,
  person: SamlPerson,
  responseOverrides: Partial<SamlResponseOptions> = {},
  fields: Record<string, string> = {},
): Promise<SignedInThroughIdp> {
  const started = await startSignIn(browser, fields);
  const answer = await postToAcsAndFinish(browser, responseFor(latchkey, idp, person, started.requestId, responseOverrides), started.relayState, { origin: idp.origin });
  return { ...answer, started, requestId: started.requestId, response: answer.finish ?? answer.acs };
}
