/**
 * An origin exactly as browsers send it: scheme, host and optional port, nothing else. The
 * settings that list origins (CSRF_TRUSTED_ORIGINS, CORS_ALLOWED_ORIGINS,
 * MFA_WEBAUTHN_ALLOWED_ORIGINS) sit in three groups and share this one check.
 */
export function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
}
