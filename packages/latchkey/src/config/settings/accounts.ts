/** "Accounts" in docs/settings.md: signing up, logging in, addresses and their verification. */
import { z } from 'zod';
import { parseRateLimitRules, RATE_LIMIT_ACTIONS, RATE_LIMIT_SCOPES } from '../../core/rate-limit/rules.js';
import { LOGIN_BY_CODE_REQUIRED_METHODS } from '../choices.js';
import { SIGNUP_FIELD_ENTRY } from '../signup-fields.js';
import { booleanField, enumField, integerField, jsonObjectField, listField, optionalStringField, stringField, stringListField } from '../fields.js';
import { urlFor } from '../url-names.js';
import { setting, VALUE, type SettingGroup } from './declaration.js';

/**
 * A path on this site such as `/` or `/users/~redirect/`, for the redirect settings. It must pass
 * the same test as a `next` parameter (http/kit/safe-redirect.ts), or the setting itself would be an
 * open redirect: one leading slash, never two (`//evil.example/` is another host) nor a slash and
 * a backslash (`/\evil.example/`, which browsers read the same way); no whitespace or control
 * character (browsers strip a tab or newline, turning `/\t/evil.example` into `//evil.example`);
 * no percent-encoded slash or backslash that a later decode could turn into either.
 */
const LOCAL_PATH = /^\/(?![/\\])(?!.*%(?:2f|5c))[\x21-\x5b\x5d-\x7e]*$/i;

/** Whether `text` is a rule list in allauth's rate-limit notation, read by the one parser the limiter uses. */
function isRateLimitRuleList(text: string): boolean {
  try {
    parseRateLimitRules(text);
    return true;
  } catch {
    return false;
  }
}

const rateLimitsSchema = z.union([z.literal(false), z.partialRecord(z.enum(RATE_LIMIT_ACTIONS), z.string().refine(isRateLimitRuleList))]);

const ACCOUNT_SETTINGS = {
  ACCOUNT_LOGIN_METHODS: setting({
    field: listField(['username', 'email'] as const, 1),
    // People log in by what the project's users have (USERNAME_TYPE), unless the project says more.
    default: { base: (project) => [project.USERNAME_TYPE] },
    docs: {
      allowed: 'list of `username`, `email` (at least one)',
      default: '`[USERNAME_TYPE]`',
      does:
        'How a person identifies themself when logging in, and which identifier `manage changepassword` accepts. An ' +
        'identifier containing `@` is tried as an email address when `email` is listed. Other identifiers are tried as ' +
        'usernames when `username` is listed. An `email` project cannot list `username`. In a `username` project, ' +
        'several users may share an email address; an email login then reaches the account that verified the address, ' +
        'or, when nobody has, the only account with it (an address shared by several unverified accounts logs in ' +
        'nobody).',
    },
  }),
  ACCOUNT_SIGNUP_FIELDS: setting({
    field: stringListField('a comma-separated list of fields, each with a trailing `*` for required', z.string().regex(SIGNUP_FIELD_ENTRY)),
    default: { base: (project) => (project.USERNAME_TYPE === 'username' ? ['email*', 'username*', 'password1*', 'password2*'] : ['email*', 'password1*', 'password2*']) },
    docs: {
      allowed: 'list of `email`, `email2`, `username`, `name`, `password1`, `password2` and the project\'s own user fields, each with a trailing `*` for required',
      default: '`email*,username*,password1*,password2*` (`email*,password1*,password2*` for `email` projects)',
      does:
        "What the signup asks, in the form's order, as allauth 65's setting: `email2` asks the address twice, `password2` the password twice, " +
        '`name` the display name, and a user field of the project\'s own (docs/user-fields.md) its value. `email*` and `password1*` are always required, `username*` exactly in a `username` project, and ' +
        'a confirmation (`email2*`, `password2*`) is required when listed; start-up refuses any other list in one line. The headless ' +
        "signup reads the same list (its `password` and `email` count as confirmed, as allauth's).",
    },
  }),
  ACCOUNT_ALLOW_REGISTRATION: setting({
    field: booleanField(),
    default: { base: true },
    docs: {
      allowed: '`true` / `false`',
      does: 'Public signup, both local and social.',
    },
  }),
  ACCOUNT_EMAIL_VERIFICATION: setting({
    field: enumField(['mandatory', 'optional', 'none'] as const),
    default: { base: 'mandatory', local: 'optional' },
    docs: {
      allowed: '`mandatory`, `optional`, `none`',
      does:
        'Whether people must confirm their email address before they can log in. `check --deploy` warns about anything ' +
        'other than `mandatory`.',
    },
  }),
  ACCOUNT_EMAIL_SUBJECT_PREFIX: setting({
    field: optionalStringField('any text, or empty for "[SITE_NAME] "', /^[^\r\n]*$/),
    default: { base: null },
    docs: {
      allowed: 'any single-line text, or empty',
      default: 'unset (gives `"[SITE_NAME] "`)',
      does: 'Text put in front of every email subject.',
    },
  }),
  ACCOUNT_EMAIL_CONFIRMATION_EXPIRE_DAYS: setting({
    field: integerField(1, 365),
    default: { base: 3 },
    docs: {
      allowed: 'whole number 1–365',
      does: 'Days an email confirmation link stays valid.',
    },
  }),
  ACCOUNT_PASSWORD_RESET_TIMEOUT: setting({
    field: integerField(60, 30 * 86400),
    default: { base: 3 * 86400 },
    docs: {
      allowed: 'whole number of seconds, 60–2592000 (30 days)',
      default: `${VALUE} (3 days)`,
      does: 'How long a password reset link stays valid.',
    },
  }),
  ACCOUNT_LOGIN_TIMEOUT: setting({
    field: integerField(60, 86400),
    default: { base: 15 * 60 },
    docs: {
      allowed: 'whole number of seconds, 60–86400',
      default: `${VALUE} (15 minutes)`,
      does:
        'How long a login that has started may take to finish its remaining steps, counted from the moment it stops at ' +
        'one: a browser whose login stopped for email verification is signed in when it confirms the address within ' +
        'this time (with `ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION`), and one whose login stopped for the second factor must ' +
        'give the code within it (see [mfa.md](mfa.md#logging-in-with-a-second-factor)).',
    },
  }),
  ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION: setting({
    field: booleanField(),
    // Confirming the address signs in only the login that waits for it in the same session, and only
    // when the project asks for it (allauth's default: off, the person signs in themselves).
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      default: `${VALUE} (as allauth)`,
      does:
        'Under mandatory verification, whether confirming the address signs the person in. `true`: the login that waits ' +
        'for the confirmation (after a signup, or after a password login of an unverified account) is carried on ' +
        'through its remaining stages (a second factor is still asked for) when the link is confirmed in the same ' +
        'browser or headless session within `ACCOUNT_LOGIN_TIMEOUT`. `false`: confirming only verifies the address, the ' +
        'waiting login ends, and the person signs in with their password. A confirmation in any other browser or ' +
        'session never signs anyone in, whatever the setting.',
    },
  }),
  // Login by a mailed code (allauth's defaults): off; three wrong tries; a code lives three minutes.
  ACCOUNT_LOGIN_BY_CODE_ENABLED: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      default: `${VALUE} (as allauth)`,
      does:
        `Offer "mail me a sign-in code": the pages \`${urlFor('account_request_login_code')}\` and \`confirm/\`, the login page's link, and ` +
        'the headless `auth/code/request` and `auth/code/confirm`. See ' +
        '[accounts.md](accounts.md#login-by-a-mailed-code).',
    },
  }),
  ACCOUNT_LOGIN_BY_CODE_MAX_ATTEMPTS: setting({
    field: integerField(1, 100),
    default: { base: 3 },
    docs: {
      allowed: 'whole number 1–100',
      does:
        'Wrong sign-in codes allowed (for a login by code and for the code `ACCOUNT_LOGIN_BY_CODE_REQUIRED` asks for); ' +
        'after them the code no longer works, even when right.',
    },
  }),
  ACCOUNT_LOGIN_BY_CODE_TIMEOUT: setting({
    field: integerField(30, 86400),
    default: { base: 180 },
    docs: {
      allowed: 'whole number of seconds, 30–86400',
      default: `${VALUE} (3 minutes)`,
      does: 'How long a sign-in code works.',
    },
  }),
  ACCOUNT_LOGIN_BY_CODE_REQUIRED: setting({
    field: jsonObjectField(
      z.union([z.boolean(), z.array(z.enum(LOGIN_BY_CODE_REQUIRED_METHODS))]),
      `true, false, or a JSON list from ${LOGIN_BY_CODE_REQUIRED_METHODS.join('/')}`,
    ),
    default: { base: false },
    docs: {
      allowed: 'JSON `true`, `false`, or a list from `"password"`, `"socialaccount"`, `"mfa"`',
      does:
        'A login must also give a code mailed to the account, right after its first factor (the `login_by_code` stage, ' +
        'before email verification and the second factor). `true`: every login that did not begin with a code; a list: ' +
        "logins begun by a password (the admin's form too), a provider or SAML sign-in (`socialaccount`), or a passkey " +
        '(`mfa`), as allauth names them. An account without any address cannot log in; the token API refuses such ' +
        'logins. See [accounts.md](accounts.md#a-code-at-every-login-account_login_by_code_required).',
    },
  }),
  // Verification by a mailed code instead of a link (allauth's defaults): off; three wrong tries;
  // a code lives fifteen minutes.
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: setting({
    field: booleanField(),
    default: { base: false },
    docs: {
      allowed: '`true` / `false`',
      default: `${VALUE} (as allauth)`,
      does:
        `Confirmation mails carry a short code instead of a link, typed in at \`${urlFor('account_email_verification_sent')}\` or sent as the ` +
        '`key` of the headless `auth/email/verify`, in the session it was mailed for only. A right code in the session ' +
        'whose login waits for verification signs the person in (through the remaining steps), whatever ' +
        '`ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION` says. See [accounts.md](accounts.md#email-verification-by-code).',
    },
  }),
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_MAX_ATTEMPTS: setting({
    field: integerField(1, 100),
    default: { base: 3 },
    docs: {
      allowed: 'whole number 1–100',
      does:
        'Wrong verification codes allowed; after them the code no longer works, even when right (a waiting login ends; ' +
        'a new code must be asked for).',
    },
  }),
  ACCOUNT_EMAIL_VERIFICATION_BY_CODE_TIMEOUT: setting({
    field: integerField(30, 86400),
    default: { base: 900 },
    docs: {
      allowed: 'whole number of seconds, 30–86400',
      default: `${VALUE} (15 minutes)`,
      does: 'How long a verification code works.',
    },
  }),
  ACCOUNT_MAX_EMAIL_ADDRESSES: setting({
    field: integerField(1, 100),
    default: { base: 5 },
    docs: {
      allowed: 'whole number 1–100',
      does: `The most email addresses one account may hold at \`${urlFor('account_email')}\`.`,
    },
  }),
  ACCOUNT_EMAIL_DOMAIN_ALLOWLIST: setting({
    field: stringListField('a comma-separated list of domain names such as example.com, or empty for no restriction', z.string().regex(/^[a-z0-9.-]+\.[a-z0-9-]+$/i)),
    // Used by the project's adapter (the example site's and generated projects'): empty allows any domain.
    default: { base: [] },
    docs: {
      allowed: 'comma-separated domain names',
      default: `${VALUE} (no restriction)`,
      does:
        "Read by the project's adapter (the example site's `ExampleAccountAdapter`): when not empty, signup and new " +
        'addresses are allowed only at these domains.',
    },
  }),
  ACCOUNT_SESSION_REMEMBER: setting({
    field: jsonObjectField(z.boolean().nullable(), 'true, false or null (ask with a checkbox)'),
    default: { base: null },
    docs: {
      allowed: 'JSON `true`, `false` or `null`',
      does:
        '`true`: always remember the login. `false`: always end it with the browser session. `null`: the password ' +
        'login shows a "remember me" checkbox; a login that asks nothing (a code, a passkey, a provider, a signup) is ' +
        'remembered, as Django keeps any other session for SESSION_COOKIE_AGE.',
    },
  }),
  // Where a login without a safe `next`, and a logout, land: the home page, as in allauth.
  LOGIN_REDIRECT_URL: setting({
    field: stringField('a path on this site starting with one slash, in ASCII (percent-encode other characters), e.g. / or /users/~redirect/', LOCAL_PATH),
    default: { base: '/' },
    docs: {
      allowed:
        'a path on this site: it starts with one `/` (not `//`), in ASCII (percent-encode other characters: ' +
        '`/caf%C3%A9/`), with no backslash, space, control character or encoded slash (`%2F`, `%5C`), e.g. ' +
        '`/users/~redirect/`',
      does:
        'Where a finished login goes when it was given no `next`, or a `next` that is not a same-site path: after the ' +
        'login form, after the code step of a login with a second factor, after a signup that signs in, and after the ' +
        'confirmation link that finishes a waiting login. A signed-in visitor who opens the login or signup page is ' +
        'sent here too. Full URLs and `//host` paths are refused, so the setting cannot become an open redirect.',
    },
  }),
  LOGOUT_REDIRECT_URL: setting({
    field: stringField('a path on this site starting with one slash, in ASCII (percent-encode other characters), e.g. / or /accounts/login/', LOCAL_PATH),
    default: { base: '/' },
    docs: {
      allowed: 'a path on this site, as for `LOGIN_REDIRECT_URL`',
      does: 'Where signing out goes, and where the logout page sends a visitor who is not signed in.',
    },
  }),
  ACCOUNT_RATE_LIMITS: setting({
    field: jsonObjectField(
      rateLimitsSchema,
      `false, or a JSON object from ${RATE_LIMIT_ACTIONS.join('/')} to rules like "10/m/ip,5/5m/ip+key" (scopes ${RATE_LIMIT_SCOPES.join(', ')})`,
    ),
    // allauth's defaults, except that an account's five failures in five minutes are counted per
    // address (ip+key), so a stranger who uses them up holds back only their own address; and, as
    // NIST SP 800-63B asks, never more than 100 failures for one account in a day, from anywhere.
    // docs/accounts.md ("Rate limits") says why. docs/settings.md shows this object after the table.
    default: {
      base: {
        login: '30/m/ip',
        login_failed: '10/m/ip,5/5m/ip+key,100/d/key',
        signup: '20/m/ip',
        confirm_email: '1/3m/key',
        reset_password: '20/m/ip,5/m/key',
        reset_password_from_key: '20/m/ip',
        change_password: '5/m/user',
        manage_email: '10/m/user',
        reauthenticate: '10/m/user',
        request_login_code: '20/m/ip,3/m/key',
      },
    },
    docs: {
      allowed: '`false`, or a JSON object from action to rules (see below)',
      default: 'see below',
      does:
        'Limits on how often each account action may be tried; a refused request gets status 429. `false` turns every ' +
        'limit off. `check --deploy` warns when the value is `false`. See [accounts.md](accounts.md#rate-limits).',
    },
  }),
};

export const ACCOUNTS: SettingGroup<typeof ACCOUNT_SETTINGS> = {
  id: 'accounts',
  projectFileEntries: [
    {
      name: 'USERNAME_TYPE',
      variable: '— (project file only)',
      allowed: '`username` or `email`',
      default: 'as generated',
      does: 'See [above](#where-values-come-from).',
    },
  ],
  settings: ACCOUNT_SETTINGS,
};
