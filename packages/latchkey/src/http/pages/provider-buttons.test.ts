/**
 * The provider buttons on the login and signup pages, with an app of every named provider of the
 * catalogue configured without a name: each is listed by its provider's name ("GitHub", not
 * "github"), as allauth's provider.name falls back to the provider class's, at its own login URL
 * (Amazon Cognito's at allauth's slug), and the same name is what the headless configuration and
 * the operator's list of apps show. Hidden apps (a mobile client's, used for token logins only)
 * are not listed, and nothing on the pages loads from or points to another origin.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MANAGEMENT_COMMAND, addSocialApp } from '../../socialaccount/flows/manage-apps.js';
import { listSocialApps } from '../../socialaccount/flows/list-apps.js';
import { NAMED_PROVIDER_KINDS } from '../../socialaccount/providers/catalogue/index.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { providersSettingOf } from '../../testing/every-provider-kind.js';
import { HeadlessTestClient } from '../../testing/headless.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { PageClient } from '../../testing/pages.js';

/** What each named provider is called, as allauth's provider classes name them. */
const NAMES: Record<string, string> = {
  google: 'Google',
  slack: 'Slack',
  linkedin: 'LinkedIn',
  linkedin_oauth2: 'LinkedIn',
  okta: 'Okta',
  auth0: 'Auth0',
  keycloak: 'Keycloak',
  salesforce: 'Salesforce',
  amazon_cognito: 'Amazon Cognito',
  github: 'GitHub',
  gitlab: 'GitLab',
  bitbucket_oauth2: 'Bitbucket',
  stackexchange: 'Stack Exchange',
  atlassian: 'Atlassian',
  microsoft: 'Microsoft Graph',
  facebook: 'Facebook',
  twitter_oauth2: 'X',
  reddit: 'Reddit',
  apple: 'Apple',
  discord: 'Discord',
  twitch: 'Twitch',
  spotify: 'Spotify',
  dropbox: 'Dropbox',
  zoom: 'Zoom',
  notion: 'Notion',
  figma: 'Figma',
  patreon: 'Patreon',
  strava: 'Strava',
};

/** Each provider's login URL: /accounts/<id>/login/, or its kind's slug where allauth has one. */
const LOGIN_URLS: Record<string, string> = { amazon_cognito: '/accounts/amazon-cognito/login/' };
const loginUrlOf = (id: string) => LOGIN_URLS[id] ?? `/accounts/${id}/login/`;

const KINDS = NAMED_PROVIDER_KINDS.map((kind) => kind.id);
const SITE_ORIGIN = 'http://testserver';

/** The buttons of the page's provider list (templates/socialaccount/_provider_list.html), as shown. */
function providerButtons(html: string): { name: string; href: string }[] {
  const list = /<div class="lk-providers">([\s\S]*?)<\/div>/.exec(html);
  expect(list, 'the page lists providers').not.toBeNull();
  return [...list![1]!.matchAll(/<a href="([^"]*)">([^<]*)<\/a>/g)].map(([, href, name]) => ({ name: name!, href: href! }));
}

/** Every URL the page loads or points to (src, srcset, href, action, formaction, poster, CSS url()), none of them another origin's. */
function foreignUrls(html: string): string[] {
  const attributes = [...html.matchAll(/\s(?:src|href|action|formaction|poster|data)\s*=\s*["']([^"']*)["']/gi)].map((match) => match[1]!);
  const srcsets = [...html.matchAll(/\ssrcset\s*=\s*["']([^"']*)["']/gi)].flatMap((match) => match[1]!.split(',').map((candidate) => candidate.trim().split(/\s+/)[0]!));
  const cssUrls = [...html.matchAll(/url\(\s*["']?([^"')]*)["']?\s*\)/gi)].map((match) => match[1]!);
  return [...attributes, ...srcsets, ...cssUrls].filter((url) => {
    const decoded = url.replaceAll('&amp;', '&').replaceAll('&#x2F;', '/').replaceAll('&#47;', '/');
    if (decoded === '' || decoded.startsWith('#')) return false;
    return new URL(decoded, `${SITE_ORIGIN}/accounts/login/`).origin !== SITE_ORIGIN;
  });
}

describe('the table of names', () => {
  it('covers every named provider of the catalogue', () => {
    expect(Object.keys(NAMES).sort()).toEqual([...KINDS].sort());
  });

  it('finds another origin in a page that has one, and none in one that has only its own', () => {
    const page = '<img src="https://cdn.example/logo.svg"><a href="//evil.example/x">x</a><form action="/accounts/login/"></form><div style="background: url(https://fonts.example/f.woff)"></div><img srcset="/a.png 1x, https://cdn.example/b.png 2x">';
    expect(foreignUrls(page)).toEqual(['https://cdn.example/logo.svg', '//evil.example/x', 'https://cdn.example/b.png', 'https://fonts.example/f.woff']);
    expect(foreignUrls('<a href="/accounts/github/login/">GitHub</a><a href="http://testserver/">home</a><a href="#main">skip</a>')).toEqual([]);
  });
});

describe.each(testDatabaseKinds())('provider buttons on %s', (kind) => {
  let latchkey: TestLatchkey;
  let browser: PageClient;
  afterEach(async () => {
    await browser?.close();
    await latchkey?.destroy();
  });

  /** Every named provider, none with a name; beside Google's and Apple's, a hidden mobile client each, and a hidden OpenID Connect server. */
  async function setUp(): Promise<void> {
    const providers = providersSettingOf(KINDS);
    const hidden = { hidden: true };
    providers.google!.APPS.push({ client_id: 'ios-google', settings: { ...hidden } });
    providers.apple!.APPS.push({ client_id: 'com.example.ios', settings: { ...hidden } });
    const hiddenServer = { provider_id: 'hidden-corp', name: 'Hidden Corp', client_id: 'corp', secret: 's', settings: { server_url: 'https://id.example.com', ...hidden } };
    latchkey = await createTestLatchkey({ kind, settings: { SOCIALACCOUNT_PROVIDERS: { ...providers, openid_connect: { APPS: [hiddenServer] } } } });
    browser = await PageClient.create(latchkey);
  }

  const expectedButtons = () => KINDS.map((id) => ({ name: NAMES[id]!, href: loginUrlOf(id) })).sort((a, b) => a.name.localeCompare(b.name) || a.href.localeCompare(b.href));
  const byName = (buttons: { name: string; href: string }[]) => [...buttons].sort((a, b) => a.name.localeCompare(b.name) || a.href.localeCompare(b.href));

  it.each(['/accounts/login/', '/accounts/signup/'])('%s lists every provider by its name at its login URL, the hidden apps left out, nothing from another origin', async (path) => {
    await setUp();
    const page = await browser.get(path);
    expect(page.statusCode).toBe(200);
    const buttons = providerButtons(page.body);
    expect(byName(buttons)).toEqual(expectedButtons());
    // One button per provider: the hidden apps of Google and Apple add none.
    expect(buttons.filter((button) => button.href === '/accounts/google/login/')).toHaveLength(1);
    expect(page.body).not.toContain('Hidden Corp');
    expect(page.body).not.toContain('/accounts/oidc/hidden-corp/');
    // The id is never what a button says.
    for (const id of KINDS) expect(page.body).not.toContain(`>${id}</a>`);
    expect(foreignUrls(page.body)).toEqual([]);
    // Each button leads to a page of the site that names the provider and starts its sign-in.
    for (const { name, href } of buttons.filter((button) => ['GitHub', 'Amazon Cognito', 'Microsoft Graph'].includes(button.name))) {
      const confirm = await browser.get(href);
      expect(confirm.statusCode, href).toBe(200);
      expect(confirm.body).toContain(`Sign in via ${name}`);
      expect(confirm.body).toContain(`action="${href}"`);
    }
  });

  it('gives the same names in the headless configuration and the operator\'s list of apps', async () => {
    await setUp();
    const api = new HeadlessTestClient(await HeadlessTestClient.createApp(latchkey), 'browser', latchkey);
    const offered = (await api.get('/config')).body.data.socialaccount.providers as { id: string; name: string }[];
    expect(offered.map(({ id, name }) => ({ id, name })).sort((a, b) => a.id.localeCompare(b.id))).toEqual(KINDS.map((id) => ({ id, name: NAMES[id] })).sort((a, b) => a.id.localeCompare(b.id)));

    const { fromSettings } = await listSocialApps(latchkey.deps);
    for (const id of KINDS) expect(fromSettings.find((app) => app.provider === id && app.clientId === `${id}-client`)?.name, id).toBe(NAMES[id]);
    // An app of a type with several apps keeps its own name, or else its provider_id.
    expect(fromSettings.find((app) => app.provider === 'openid_connect')?.name).toBe('Hidden Corp');
  });

  it('stores an app added without a name under its provider\'s name, and lists it so', async () => {
    latchkey = await createTestLatchkey({ kind });
    browser = await PageClient.create(latchkey);
    const added = await addSocialApp(
      latchkey.deps,
      MANAGEMENT_COMMAND,
      { provider: 'github', providerId: '', name: '', clientId: 'gh', key: '', settings: {}, secret: '' },
      { ip: '127.0.0.1', userAgent: 'test' },
    );
    expect(added.name).toBe('GitHub');
    expect(providerButtons((await browser.get('/accounts/login/')).body)).toEqual([{ name: 'GitHub', href: '/accounts/github/login/' }]);
  });
});
