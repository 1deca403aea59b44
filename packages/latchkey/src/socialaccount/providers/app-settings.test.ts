/**
 * The one check of an app's settings: what an operator gets told for each mistake in an
 * OpenID Connect app's settings (the spec start-up, the admin, the CLI and the provider share),
 * and the values a provider reads once the check has passed.
 */
import { describe, expect, it } from 'vitest';
import { configurationError } from '../../testing/provider-outcomes.js';
import { aTextList, checkSettings, parameters, readSettings, settingProblemSentence } from './app-settings.js';
import { OPENID_CONNECT_SETTINGS, openIdConnectOptions } from './openid-connect-settings.js';

const SERVER = { server_url: 'https://id.corp.example' };
const problemOf = (settings: Record<string, unknown>) => checkSettings('openid_connect', settings, OPENID_CONNECT_SETTINGS);

describe("an OpenID Connect app's settings", () => {
  it('takes what allauth documents, and leaves keys it does not read alone', () => {
    const full = {
      ...SERVER,
      token_auth_method: 'client_secret_basic',
      oauth_pkce_enabled: false,
      fetch_userinfo: false,
      uid_field: 'oid',
      scope: ['openid', 'email'],
      auth_params: { prompt: 'login', max_age: 300 },
      hidden: true,
      verified_email: false,
      email_authentication: true,
      some_future_key: { anything: 1 },
    };
    expect(problemOf(full)).toBeUndefined();
    expect(problemOf({ server_url: 'http://127.0.0.1:8080/realms/dev' })).toBeUndefined();
    expect(openIdConnectOptions({ id: 'corp', settings: full })).toEqual({
      serverUrl: new URL('https://id.corp.example'),
      tokenAuthMethod: 'client_secret_basic',
      pkce: false,
      fetchUserinfo: false,
      uidField: 'oid',
      scope: ['openid', 'email'],
      authParams: { prompt: 'login', max_age: '300' },
    });
    expect(openIdConnectOptions({ id: 'corp', settings: SERVER })).toEqual({
      serverUrl: new URL('https://id.corp.example'),
      tokenAuthMethod: undefined,
      pkce: true,
      fetchUserinfo: true,
      uidField: 'sub',
      scope: ['openid', 'profile', 'email'],
      authParams: {},
    });
  });

  it.each([
    [{}, 'required', 'a server_url is required for openid_connect (the identity provider\'s issuer URL)'],
    [{ server_url: '' }, 'required', 'a server_url is required for openid_connect (the identity provider\'s issuer URL)'],
    [{ server_url: 'http://id.corp.example' }, 'invalid', 'server_url "http://id.corp.example" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only)'],
    [{ server_url: 'id.corp.example' }, 'invalid', 'server_url "id.corp.example" is not an https URL (plain http is allowed on 127.0.0.1, [::1] and localhost only)'],
    [{ server_url: ['https://id.corp.example'] }, 'invalid', 'server_url must be an https URL, not a list'],
    [{ ...SERVER, scope: 'openid email' }, 'invalid', 'scope must be a list of strings, not a string: write ["openid","email"]'],
    [{ ...SERVER, scope: 'openid,profile' }, 'invalid', 'scope must be a list of strings, not a string: write ["openid","profile"]'],
    [{ ...SERVER, scope: ['openid', 7] }, 'invalid', 'scope must be a list of strings, not a list holding something else'],
    [{ ...SERVER, auth_params: 'prompt=login' }, 'invalid', 'auth_params must be an object of parameters, such as {"prompt": "login"}, not a string'],
    [{ ...SERVER, auth_params: { prompt: ['login'] } }, 'invalid', 'auth_params.prompt must be a string, not a list'],
    [{ ...SERVER, uid_field: 7 }, 'invalid', 'uid_field must be a non-empty string, not a number'],
    [{ ...SERVER, fetch_userinfo: 'false' }, 'invalid', 'fetch_userinfo must be true or false, not a string'],
    [{ ...SERVER, oauth_pkce_enabled: null }, 'invalid', 'oauth_pkce_enabled must be true or false, not null'],
    [{ ...SERVER, token_auth_method: 'client_secret_jwt' }, 'invalid', 'token_auth_method must be one of "client_secret_basic", "client_secret_post", not "client_secret_jwt"'],
    [{ ...SERVER, hidden: 'yes' }, 'invalid', 'hidden must be true or false, not a string'],
    [{ ...SERVER, verified_email: ['corp.example'] }, 'invalid', 'verified_email must be true or false, not a list'],
    [{ ...SERVER, email_authentication: 1 }, 'invalid', 'email_authentication must be true or false, not a number'],
  ])('refuses %j: %s', (settings, reason, message) => {
    expect(problemOf(settings)).toEqual({ key: expect.any(String) as unknown, reason, message });
  });

  it('says each problem as a sentence, and as the error of a provider built from it, naming the app', () => {
    expect(settingProblemSentence(problemOf({})!)).toBe("A server_url is required for openid_connect (the identity provider's issuer URL).");
    expect(settingProblemSentence(problemOf({ ...SERVER, uid_field: '' })!)).toBe('uid_field must be a non-empty string, not an empty one.');
    expect(configurationError(() => openIdConnectOptions({ id: 'corp', settings: { ...SERVER, scope: 'openid' } }))).toBe(
      'The social app "corp" has unusable settings: scope must be a list of strings, not a string: write ["openid"].',
    );
  });

  it('repeats no value of a key that may hold anything, so a private key kept in the settings is never printed', () => {
    const secretLooking = '-----BEGIN PRIVATE KEY-----abc';
    for (const settings of [{ ...SERVER, uid_field: [secretLooking] }, { ...SERVER, auth_params: { key: { pem: secretLooking } } }, { ...SERVER, hidden: secretLooking }]) {
      expect(problemOf(settings)!.message).not.toContain('PRIVATE KEY');
    }
  });
});

describe('reading settings after the check', () => {
  it('gives each key its reader’s value, numbers and true/false of auth_params as text', () => {
    const read = readSettings('fixture', { id: 'fixture', settings: { scope: ['a'], auth_params: { allow_signup: false, max_age: 0 } } }, { readers: { scope: aTextList, auth_params: parameters } });
    expect(read.valueOf('scope', aTextList)).toEqual(['a']);
    expect(read.valueOf('auth_params', parameters)).toEqual({ allow_signup: 'false', max_age: '0' });
    expect(read.valueOf('absent', aTextList)).toBeUndefined();
  });
});
