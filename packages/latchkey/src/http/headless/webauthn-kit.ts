import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../core/errors.js';
import { INVALID_CREDENTIAL, type CeremonyPurpose, type WebauthnCeremony } from '../../mfa/webauthn.js';
import type { HttpContext } from '../kit/context.js';
import { bodyObject, textField } from '../kit/input.js';
import { credentialOfField, keepWebauthnCeremony, takeWebauthnCeremony } from '../kit/webauthn-ceremony.js';
import { sendOk } from './respond.js';

/**
 * What the headless WebAuthn routes share: the options' envelope and the answer's reading. The
 * ceremony is kept in the client's session (a browser's cookie session or an app's session
 * token alike) by http/kit/webauthn-ceremony.ts, under the same key the pages use.
 */

/**
 * 200 with the options in allauth's shape, `{publicKey: ...}` under `request_options` or
 * `creation_options` (what @github/webauthn-json's parse*OptionsFromJSON reads), after keeping the
 * ceremony for the answer. An app without a session gets one here: its token in
 * `meta.session_token`, to send with the answer.
 */
export async function sendWebauthnOptions(
  ctx: HttpContext,
  request: FastifyRequest,
  reply: FastifyReply,
  name: 'request_options' | 'creation_options',
  begun: { options: unknown; ceremony: WebauthnCeremony },
): Promise<FastifyReply> {
  await keepWebauthnCeremony(ctx, request, reply, begun.ceremony);
  return sendOk(ctx, request, reply, { data: { [name]: { publicKey: begun.options } } });
}

/**
 * The body's `credential`: the browser's answer as a JSON object (allauth's clients send it so), or
 * as JSON text. Anything else is refused, as a bad answer is, on the `credential` field; what is
 * inside is the flow's to judge.
 */
function credentialOf(body: unknown): Record<string, unknown> {
  const value = bodyObject(body).credential;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  if (typeof value === 'string') return credentialOfField(value);
  throw new LatchkeyError('invalid_input', INVALID_CREDENTIAL, { param: 'credential' });
}

/** A key's proof from the body, with the ceremony of that purpose this client began (taken: single use). */
export async function assertionAnswer(
  ctx: HttpContext,
  request: FastifyRequest,
  purpose: Exclude<CeremonyPurpose, 'register'>,
): Promise<{ ceremony: WebauthnCeremony | undefined; credential: AuthenticationResponseJSON }> {
  const credential = credentialOf(request.body) as unknown as AuthenticationResponseJSON;
  return { ceremony: await takeWebauthnCeremony(ctx, request, purpose), credential };
}

/** A new key from the body (`credential` and an optional `name`), with the registration ceremony this client began. */
export async function registrationAnswer(
  ctx: HttpContext,
  request: FastifyRequest,
): Promise<{ ceremony: WebauthnCeremony | undefined; credential: RegistrationResponseJSON; name: string | undefined }> {
  const credential = credentialOf(request.body) as unknown as RegistrationResponseJSON;
  return { ceremony: await takeWebauthnCeremony(ctx, request, 'register'), credential, name: textField(request.body, 'name') };
}

/** Whether the project offers security keys at all: every WebAuthn route is registered only then, as allauth's. */
export function webauthnSupported(ctx: HttpContext): boolean {
  return ctx.deps.settings.MFA_SUPPORTED_TYPES.includes('webauthn');
}
