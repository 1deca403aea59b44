import { ACCOUNTS } from './accounts.js';
import { HEADLESS } from './headless.js';
import { MFA } from './mfa.js';
import { PASSWORDS } from './passwords.js';
import { SERVICES } from './services.js';
import { SITE } from './site.js';
import { SESSIONS } from './sessions.js';
import { SOCIAL } from './social.js';

/** The groups, in the order docs/settings.md documents them. */
export const SETTING_GROUPS = [SITE, SERVICES, ACCOUNTS, PASSWORDS, SESSIONS, MFA, HEADLESS, SOCIAL] as const;

/**
 * Every setting's declaration, by name, in the order of the documentation. A name declared in two
 * groups would silently keep only the later one here; test/settings-docs.test.ts refuses that.
 */
export const SETTING_DECLARATIONS = {
  ...SITE.settings,
  ...SERVICES.settings,
  ...ACCOUNTS.settings,
  ...PASSWORDS.settings,
  ...SESSIONS.settings,
  ...MFA.settings,
  ...HEADLESS.settings,
  ...SOCIAL.settings,
};
