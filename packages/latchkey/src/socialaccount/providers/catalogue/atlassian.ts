/**
 * Atlassian (Jira, Confluence, Bitbucket Cloud accounts), as allauth's `atlassian` provider. Shapes
 * follow https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/ (authorize with
 * audience=api.atlassian.com and prompt=consent, the JSON token answer) and the User Identity API's
 * https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-myself/ ("/me":
 * account_id, email, email_verified, name, nickname).
 *
 * The address is taken as verified only when /me says email_verified true.
 */
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind } from '../oauth2.js';
import { isVouchedFor, textOf } from '../profile-fields.js';

const base = oauth2ProviderKind({
  type: 'atlassian',
  name: 'Atlassian',
  authorizeUrl: 'https://auth.atlassian.com/authorize',
  accessTokenUrl: 'https://auth.atlassian.com/oauth/token',
  profileUrl: 'https://api.atlassian.com/me',
  defaultScope: ['read:me'],
  profile(json) {
    const email = textOf(json.email);
    return {
      uid: json.account_id,
      emails: email === undefined ? [] : [{ email, verified: isVouchedFor(json.email_verified), primary: true }],
      data: { email, username: textOf(json.nickname), name: textOf(json.name) },
    };
  },
});

/**
 * Atlassian's authorize endpoint wants the API audience, and asks for consent every time; an app's
 * own auth_params come on top, as allauth merges them.
 */
const DEFAULT_AUTH_PARAMS = { audience: 'api.atlassian.com', prompt: 'consent' };

function withDefaultParams<T extends { settings: Record<string, unknown> }>(app: T): T {
  const own = app.settings.auth_params;
  if (own === undefined) return { ...app, settings: { ...app.settings, auth_params: DEFAULT_AUTH_PARAMS } };
  // Anything but an object of parameters is left as written, for the base to refuse with its message.
  if (typeof own !== 'object' || own === null || Array.isArray(own)) return app;
  return { ...app, settings: { ...app.settings, auth_params: { ...DEFAULT_AUTH_PARAMS, ...own } } };
}

export const atlassianProviderKind: ProviderKind = {
  id: base.id,
  name: base.name,
  checkSettings: (settings) => base.checkSettings(settings),
  build: (app, context) => base.build(withDefaultParams(app), context),
};
