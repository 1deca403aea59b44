/**
 * Amazon Cognito user pools, through their hosted UI's OAuth 2.0 endpoints:
 * https://docs.aws.amazon.com/cognito/latest/developerguide/federation-endpoints.html
 * (/oauth2/authorize, /oauth2/token and /oauth2/userInfo on the pool's domain). userInfo sends
 * `email_verified` and `phone_number_verified` as the strings "true" and "false"; they are read as
 * booleans, "false" never taken for true.
 *
 * The domain is `domain` (allauth's DOMAIN), e.g. https://<prefix>.auth.<region>.amazoncognito.com
 * or a custom domain. The id is allauth's, `amazon_cognito`, and so are the URLs, at the slug
 * `amazon-cognito` (Cognito refuses "_" in a callback URL): /accounts/amazon-cognito/login/ and
 * /accounts/amazon-cognito/login/callback/, the one to register in the app client. A pool
 * can also be used through the generic openid_connect provider, with server_url set to the pool's
 * issuer (https://cognito-idp.<region>.amazonaws.com/<pool id>), for ID token verification.
 */
import type { SettingProblem } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { oauth2ProviderKind } from '../oauth2.js';
import { isVouchedFor, textOf } from '../profile-fields.js';
import { aHostOrUrl, requiredSetting } from './oidc-kinds.js';

/** The claims Cognito's userInfo sends as "true"/"false". */
const STRING_BOOLEANS = ['email_verified', 'phone_number_verified'];

/** The profile JSON with Cognito's string booleans as booleans: "true" is true, anything else false. */
function withBooleans(json: Record<string, unknown>): Record<string, unknown> {
  const read = { ...json };
  for (const claim of STRING_BOOLEANS) {
    if (claim in read) read[claim] = isVouchedFor(read[claim]);
  }
  return read;
}

const kind = oauth2ProviderKind({
  type: 'amazon_cognito',
  name: 'Amazon Cognito',
  authorizeUrl: '{domain}/oauth2/authorize',
  accessTokenUrl: '{domain}/oauth2/token',
  profileUrl: '{domain}/oauth2/userInfo',
  endpointValues: (settings): Record<string, string> => {
    const domain = settings.domain === undefined ? undefined : aHostOrUrl(settings.domain, 'domain');
    return domain !== undefined && 'value' in domain ? { domain: domain.value } : {};
  },
  settingsReaders: { domain: aHostOrUrl },
  defaultScope: ['openid', 'profile', 'email'],
  profile(json) {
    const profile = withBooleans(json);
    const email = textOf(profile.email);
    return {
      uid: profile.sub,
      emails: email === undefined ? [] : [{ email, verified: profile.email_verified === true, primary: true }],
      data: {
        email,
        username: textOf(profile.username) ?? textOf(profile.preferred_username),
        name: textOf(profile.name),
        firstName: textOf(profile.given_name),
        lastName: textOf(profile.family_name),
      },
      extraData: profile,
    };
  },
});

/** The domain is needed unless each of the three endpoints is replaced whole. */
function domainProblem(settings: Readonly<Record<string, unknown>>): SettingProblem | undefined {
  if (['authorize_url', 'access_token_url', 'profile_url'].every((key) => settings[key] !== undefined)) return undefined;
  const domain = requiredSetting('amazon_cognito', settings, 'domain', "the user pool's domain, such as https://<prefix>.auth.<region>.amazoncognito.com", aHostOrUrl);
  return typeof domain === 'string' ? undefined : domain;
}

export const amazonCognitoProviderKind: ProviderKind = {
  ...kind,
  slug: 'amazon-cognito',
  checkSettings: (settings) => kind.checkSettings(settings) ?? domainProblem(settings),
};
