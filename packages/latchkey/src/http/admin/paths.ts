import type { AdminModel } from '../../admin/model.js';
import type { Settings } from '../../config/settings.js';
import type { LatchkeyUrls } from '../../config/url-names.js';

/**
 * The admin's URLs, under ADMIN_URL (Django's scheme, so habits and links carry over):
 * `<admin>/`, `<admin>/login/`, `<admin>/logout/`, `<admin>/<app>/<model>/`. Their names and
 * paths are config/url-names.ts's ADMIN_URLS; this is the root the admin's routes are registered
 * under (`admin:index`'s route).
 */
export function adminRoot(settings: Pick<Settings, 'ADMIN_URL'>): string {
  return `/${settings.ADMIN_URL}`;
}

/** A model's app and name as its pages' URLs carry them: `users.user` is `{ app: 'users', model: 'user' }`. */
export function modelParams(model: AdminModel): { app: string; model: string } {
  const [app = '', name = ''] = model.split('.');
  return { app, model: name };
}

/**
 * One model's pages (Django admin's `admin:<app>_<model>_changelist`, `_add`, `_change`,
 * `_delete`): `routes`, the paths they are registered at (`:id` for the router), and the links.
 */
export interface ModelPages {
  readonly routes: { readonly list: string; readonly add: string; readonly change: string; readonly delete: string };
  /** The list (changelist), where every list link starts and a query is added. */
  readonly list: string;
  readonly add: string;
  change(id: string | number): string;
  delete(id: string | number): string;
}

export function modelPages(urls: LatchkeyUrls, model: AdminModel): ModelPages {
  const params = modelParams(model);
  return {
    routes: {
      list: urls.route('admin:model_changelist', params),
      add: urls.route('admin:model_add', params),
      change: urls.route('admin:model_change', params),
      delete: urls.route('admin:model_delete', params),
    },
    list: urls.urlFor('admin:model_changelist', params),
    add: urls.urlFor('admin:model_add', params),
    change: (id) => urls.urlFor('admin:model_change', { ...params, id }),
    delete: (id) => urls.urlFor('admin:model_delete', { ...params, id }),
  };
}
