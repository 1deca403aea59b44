import type { Settings } from '../../config/settings.js';

/**
 * The admin's URLs, under ADMIN_URL (Django's scheme, so habits and links carry over):
 * `<admin>/`, `<admin>/login/`, `<admin>/logout/`, `<admin>/<app>/<model>/`.
 */
export function adminRoot(settings: Pick<Settings, 'ADMIN_URL'>): string {
  return `/${settings.ADMIN_URL}`;
}
