
/**
 * A user's API token (Django REST framework's authtoken: one per user, valid until deleted). The
 * key itself is never stored: `keyHash` (a keyed hash) finds it, and `sealedKey` (the key
 * encrypted under the project's secret key) lets the login endpoint hand the same key out again.
 */
export interface ApiToken {
  userId: number;
  keyHash: string;
  sealedKey: string;
  createdAt: Date;
}
