import type { FastifyRequest } from 'fastify';
import type { MailOutcome } from '../../account/emails.js';
import type { ClientInfo } from '../../core/client.js';
import { languageNegotiatedFor } from './request-language.js';

/** Who is asking, as flows record it (rate limits per IP, events, the sessions list). */
export function clientOf(request: FastifyRequest): ClientInfo {
  const language = languageNegotiatedFor(request);
  return { ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '').slice(0, 512), ...(language === undefined ? {} : { language }) };
}

/** Notifications are never worth failing a finished change for; an operator should hear of them. */
export function logMailFailures(request: FastifyRequest, outcomes: MailOutcome[], what: string): void {
  for (const outcome of outcomes) if (outcome.status === 'failed') request.log.error({ err: outcome.error }, `${what}: email not sent`);
}
