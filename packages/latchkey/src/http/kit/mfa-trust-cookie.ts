import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../../config/settings.js';
import { MFA_TRUST_COOKIE } from '../../mfa/trust.js';

/** The browser's "trust" cookie as sent, for the login stages to judge (mfa/trust.ts). */
export function mfaTrustTokenOf(request: FastifyRequest): string | undefined {
  return request.cookies[MFA_TRUST_COOKIE];
}

/**
 * Gives the browser its "trust this browser" cookie (when the flow made a token): HttpOnly, since
 * no script needs it, and SameSite=Lax, so it goes only with the site's own logins.
 */
export function setMfaTrustCookie(reply: FastifyReply, settings: Pick<Settings, 'SESSION_COOKIE_SECURE' | 'MFA_TRUST_COOKIE_AGE'>, token: string | undefined): void {
  if (token === undefined) return;
  reply.setCookie(MFA_TRUST_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'lax', secure: settings.SESSION_COOKIE_SECURE, maxAge: settings.MFA_TRUST_COOKIE_AGE });
}
