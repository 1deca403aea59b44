import { describe, expect, it } from 'vitest';
import { isLatchkeyError } from '../core/errors.js';
import { appFromRow, appsFromSettings, findApp, visibleApps } from './apps.js';

const corp = { provider_id: 'corp', name: 'Corp SSO', client_id: 'latchkey', secret: 's3cret', settings: { server_url: 'https://id.corp.example' } };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isLatchkeyError(error) && error.code === 'configuration_invalid') return error.message;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('provider apps from SOCIALACCOUNT_PROVIDERS', () => {
  it('reads each APPS entry, its provider-wide settings under the app names, the app’s own winning', () => {
    const [app] = appsFromSettings({ openid_connect: { OAUTH_PKCE_ENABLED: false, SCOPE: ['openid'], APPS: [{ ...corp, settings: { ...corp.settings, scope: ['openid', 'email'] } }] } });
    expect(app).toEqual({
      provider: 'openid_connect',
      providerId: 'corp',
      id: 'corp',
      name: 'Corp SSO',
      clientId: 'latchkey',
      secret: 's3cret',
      key: '',
      settings: { oauth_pkce_enabled: false, scope: ['openid', 'email'], server_url: 'https://id.corp.example' },
    });
  });

  it('takes the older single APP, and leaves an unnamed app of a named provider to go by its kind\'s name', () => {
    const [app] = appsFromSettings({ github: { APP: { client_id: 'gh' } } });
    // '' rather than "github": the registry's withShownName calls it "GitHub".
    expect(app).toMatchObject({ id: 'github', name: '', providerId: '', secret: '' });
    // An app of a kind with several apps goes by its provider_id, which tells it from the others.
    expect(appsFromSettings({ openid_connect: { APPS: [{ ...corp, name: undefined }] } })[0]).toMatchObject({ name: 'corp' });
  });

  it('refuses what cannot work, naming the entry and never the secret', () => {
    expect(refusal(() => appsFromSettings({ openid_connect: { APPS: [{ ...corp, provider_id: undefined }] } }))).toBe(
      'SOCIALACCOUNT_PROVIDERS.openid_connect.APPS[0]: a provider_id is required for openid_connect (it names the app in its URLs).',
    );
    expect(refusal(() => appsFromSettings({ openid_connect: { APPS: [{ ...corp, client_id: '' }] } }))).toBe('SOCIALACCOUNT_PROVIDERS.openid_connect.APPS[0].client_id: a client_id is required.');
    expect(refusal(() => appsFromSettings({ openid_connect: { APPS: [{ ...corp, provider_id: '../x' }] } }))).toMatch(/APPS\[0\]\.provider_id: letters, digits/);
    expect(refusal(() => appsFromSettings({ openid_connect: { APPS: 'corp' } }))).toBe('SOCIALACCOUNT_PROVIDERS.openid_connect.APPS must be a list of apps.');
    const twice = refusal(() => appsFromSettings({ openid_connect: { APPS: [corp, corp] } }));
    expect(twice).toContain('twice');
    expect(twice).not.toContain('s3cret');
  });
});

describe('finding the app for a sign-in', () => {
  const fromSettings = appsFromSettings({ openid_connect: { APPS: [corp] } });
  const row = { id: 7, provider: 'openid_connect', providerId: 'corp', name: 'Corp (db)', clientId: 'other', sealedSecret: 'v1.x', key: '', settings: {} };

  it('finds one app by its id, and nothing for an unknown one', () => {
    expect(findApp(fromSettings, 'corp')?.clientId).toBe('latchkey');
    expect(findApp(fromSettings, 'nobody')).toBeUndefined();
  });

  it('refuses to guess between a settings app and a database app for one id, unless all but one are hidden', () => {
    const both = [...fromSettings, appFromRow(row, 'db-secret')];
    expect(refusal(() => findApp(both, 'corp'))).toContain('Several social apps answer to "corp"');
    const hidden = [...fromSettings, appFromRow({ ...row, settings: { hidden: true } }, 'db-secret')];
    expect(findApp(hidden, 'corp')?.clientId).toBe('latchkey');
    expect(visibleApps(hidden).map((app) => app.clientId)).toEqual(['latchkey']);
  });
});
