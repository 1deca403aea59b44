/**
 * GitLab (gitlab.com or a self-managed instance), as allauth's `gitlab` provider. Shapes follow
 * https://docs.gitlab.com/api/oauth2/ (authorize, token, the read_user scope) and
 * https://docs.gitlab.com/api/users/#get-the-current-user (/api/v4/user).
 *
 * Settings: `gitlab_url` (GITLAB_URL provider-wide) for a self-managed instance. The access token
 * goes in the Authorization header, not in the query string as allauth sends it, so that it stays
 * out of the instance's access logs. GitLab's address is never taken as verified (allauth's rule).
 */
import { anEndpoint } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind } from '../oauth2.js';
import { textOf } from '../profile-fields.js';

export const gitlabProviderKind: ProviderKind = oauth2ProviderKind({
  type: 'gitlab',
  name: 'GitLab',
  authorizeUrl: '{gitlab_url}/oauth/authorize',
  accessTokenUrl: '{gitlab_url}/oauth/token',
  profileUrl: '{gitlab_url}/api/v4/user',
  endpointValues: (settings) => ({ gitlab_url: typeof settings.gitlab_url === 'string' ? settings.gitlab_url : 'https://gitlab.com' }),
  settingsReaders: { gitlab_url: anEndpoint },
  defaultScope: ['read_user'],
  profile(json) {
    const email = textOf(json.email);
    return {
      uid: json.id,
      emails: email === undefined ? [] : [{ email, verified: false, primary: true }],
      data: { email, username: textOf(json.username), name: textOf(json.name) },
    };
  },
});
