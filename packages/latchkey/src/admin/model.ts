/**
 * What staff may be allowed to do in the admin area (Django's per-model permissions, granted to
 * one user at a time; no groups yet). Superusers need none: they may do everything.
 */

/**
 * The models the admin manages, named `<app>.<model>` as Django's admin names them, so that the
 * URLs (`<admin>/<app>/<model>/`) and a project's habits carry over.
 */
export const ADMIN_MODELS = [
  'users.user',
  'account.emailaddress',
  'socialaccount.socialapp',
  'socialaccount.socialaccount',
  'socialaccount.socialtoken',
  'authtoken.tokenproxy',
  'mfa.authenticator',
  'sessions.session',
  'audit.auditrecord',
] as const;
/** A model of the admin area, named `<app>.<model>` as Django's admin names it (`users.user`). */
export type AdminModel = (typeof ADMIN_MODELS)[number];

/** Django's four default permissions of a model, in the order its admin shows them. */
export const ADMIN_ACTIONS = ['view', 'add', 'change', 'delete'] as const;
/** What a permission allows on a model: `view`, `add`, `change` or `delete`, as Django's default permissions. */
export type AdminAction = (typeof ADMIN_ACTIONS)[number];

export interface AdminPermission {
  model: AdminModel;
  action: AdminAction;
}
