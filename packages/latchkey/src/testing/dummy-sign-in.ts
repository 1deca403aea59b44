/**
 * Sign-ins on the pages through allauth's dummy provider (socialaccount/providers/dummy.ts), whose
 * "provider" is a page of the site itself: no network, and the whole social pipeline (state,
 * callback, signup, email verification, MFA). The trip comes in steps, so that a test can keep a
 * started sign-in and answer it later, or move the clock in between.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { SettingValues } from '../config/settings.js';
import { urlFor } from '../config/url-names.js';
import type { PageClient } from './pages.js';

export const DUMMY_LOGIN = urlFor('socialaccount_provider_login', { provider: 'dummy' });

/** Who the person says they are on the dummy page; `email_verified` is 'true' or '' (unchecked). */
export interface DummyAnswer {
  id: string;
  email?: string;
  email_verified?: 'true' | '';
  name?: string;
}

/** SOCIALACCOUNT_PROVIDERS with the dummy provider: its provider-wide settings (VERIFIED_EMAIL, ...) and its apps, one plain app by default. */
export function dummyProviders(providerWide: Record<string, unknown> = {}, apps: unknown[] = [{ client_id: 'dummy', name: 'Dummy' }]): SettingValues['SOCIALACCOUNT_PROVIDERS'] {
  return { dummy: { ...providerWide, APPS: apps } };
}

/** A login URL's answer when it sends the browser to the dummy page: that page's URL. Throws otherwise. */
export function dummyPageOf(response: LightMyRequestResponse): URL {
  const location = response.headers.location;
  const url = typeof location === 'string' ? new URL(location, 'http://testserver') : undefined;
  if (response.statusCode !== 302 || url?.pathname !== urlFor('dummy_authenticate')) throw new Error(`The sign-in did not start: ${response.statusCode} ${String(location)}`);
  return url;
}

/** The button: a POST to the login URL (`fields`: process, next), and the dummy page it sends the browser to. */
export async function startDummySignIn(browser: PageClient, fields: Record<string, string> = {}, login = DUMMY_LOGIN): Promise<URL> {
  return dummyPageOf(await browser.post(login, fields));
}

/** The dummy page answered as `person`: the callback URL it sends the browser back to. */
export async function answerDummyPage(browser: PageClient, page: URL, person: DummyAnswer): Promise<URL> {
  const state = page.searchParams.get('state') ?? '';
  const redirectUri = page.searchParams.get('redirect_uri') ?? '';
  const answered = await browser.post(page.pathname, { state, redirect_uri: redirectUri, action: 'authenticate', email: '', email_verified: '', name: '', ...person });
  const location = answered.headers.location;
  if (answered.statusCode !== 302 || typeof location !== 'string') throw new Error(`The dummy page refused the answer: ${answered.statusCode}`);
  return new URL(location);
}

/** The browser back at the callback: the site's answer. */
export function visitCallback(browser: PageClient, callback: URL): Promise<LightMyRequestResponse> {
  return browser.get(callback.pathname + callback.search);
}

/** The whole trip: the button, the dummy page answered as `person`, and the callback's answer. */
export async function throughDummy(browser: PageClient, person: DummyAnswer, options: { fields?: Record<string, string>; login?: string } = {}): Promise<LightMyRequestResponse> {
  const page = await startDummySignIn(browser, options.fields, options.login);
  return visitCallback(browser, await answerDummyPage(browser, page, person));
}
