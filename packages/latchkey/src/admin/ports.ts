import type { AdminPermission } from './model.js';

export interface AdminPermissionRepository {
  /**
   * The user's permissions, by model then action (in the order of ADMIN_MODELS and
   * ADMIN_ACTIONS). A stored row naming a model or action this version does not know (one a later
   * version removed) is left out rather than handed on.
   */
  listForUser(userId: number): Promise<AdminPermission[]>;
  /**
   * Replaces all of the user's permissions with these (duplicates count once), in one
   * transaction: a reader sees the old set or the new, and two parallel replacements leave one of
   * the two sets whole. Throws 'not_found' for a missing user.
   */
  replaceForUser(userId: number, permissions: readonly AdminPermission[]): Promise<void>;
}
