import type { ProjectSettings } from 'latchkey';

/**
 * The project's account settings, all in one place (as cookiecutter-django's config/settings/).
 * USERNAME_TYPE was chosen when the project was generated; it shapes the database schema and is
 * not read from the environment. Everything else can be overridden by environment variables
 * (docs/settings.md).
 */
export const projectSettings: ProjectSettings = {
  USERNAME_TYPE: 'username',
  SITE_NAME: 'Latchkey Example',
  DOMAIN_NAME: 'example.com',
  base: {
    ACCOUNT_ALLOW_REGISTRATION: true,
  },
  local: {},
  production: {},
  test: {},
};
