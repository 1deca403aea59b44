/** What the admin is told of the project that mounts it. */
export interface AdminOptions {
  /** Whether the project serves the API layer (use_drf=y): its tokens get a page only then, as DRF's authtoken admin. */
  apiTokens: boolean;
}
