/**
 * Hides the credentials in a service URL (DATABASE_URL, EMAIL_URL, REDIS_URL) so that it can
 * appear in an error message or a log line. It works on text, not on a parsed URL, because the
 * values that most need masking are the malformed ones a URL parser rejects: everything from the
 * first colon after `//` to the last `@` is hidden (which may hide a little more than the password,
 * never less), and so is any `password=` query parameter.
 */
export function maskUrlCredentials(value: string): string {
  let masked = value;
  const authorityStart = masked.indexOf('//');
  const userinfoEnd = masked.lastIndexOf('@');
  if (authorityStart !== -1 && userinfoEnd > authorityStart) {
    const passwordStart = masked.indexOf(':', authorityStart + 2);
    if (passwordStart !== -1 && passwordStart < userinfoEnd) {
      masked = `${masked.slice(0, passwordStart + 1)}***${masked.slice(userinfoEnd)}`;
    }
  }
  return masked.replace(/([?&]password=)[^&#]*/gi, '$1***');
}
