import type { FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../core/errors.js';
import { INVALID_CREDENTIAL, type CeremonyPurpose, type WebauthnCeremony } from '../../mfa/webauthn.js';
import type { HttpContext } from './context.js';
import { parseJson } from './input.js';

/**
 * The WebAuthn ceremony a client has begun (mfa/webauthn.ts), kept in its session between the
 * options it was given and the answer its authenticator makes, one per purpose: a person may have
 * a reauthentication under way in one tab while adding a key in another, and neither should
 * spoil the other. Every door keeps it under the same key, so a ceremony begun through one is
 * answered through any.
 *
 * A ceremony is taken (forgotten) as soon as an answer comes, right or wrong: its challenge is
 * single use anyway (claimCeremony), and a client that failed asks for new options.
 */
const CEREMONIES = '_webauthn_ceremonies';

type KeptCeremonies = Partial<Record<CeremonyPurpose, WebauthnCeremony>>;

function keptCeremonies(data: Record<string, unknown> | undefined): KeptCeremonies {
  const kept = data?.[CEREMONIES];
  return kept !== null && typeof kept === 'object' && !Array.isArray(kept) ? kept : {};
}

/** Keeps the ceremony this client has just been given the options of, replacing one of the same purpose. */
export async function keepWebauthnCeremony(ctx: HttpContext, request: FastifyRequest, reply: FastifyReply, ceremony: WebauthnCeremony): Promise<void> {
  const session = await ctx.sessions.ensureSession(request, reply);
  const ceremonies = { ...keptCeremonies(session.data), [ceremony.purpose]: ceremony };
  await ctx.deps.sessions.saveData(session, { ...session.data, [CEREMONIES]: ceremonies });
}

/** The ceremony of this purpose the client began, if any, forgotten as it is handed over. */
export async function takeWebauthnCeremony(ctx: HttpContext, request: FastifyRequest, purpose: CeremonyPurpose): Promise<WebauthnCeremony | undefined> {
  const session = await ctx.sessions.session(request);
  if (!session) return undefined;
  const { [purpose]: taken, ...rest } = keptCeremonies(session.data);
  if (taken === undefined) return undefined;
  await ctx.deps.sessions.saveData(session, { ...session.data, [CEREMONIES]: rest });
  return taken;
}

/**
 * The `credential` a form posts (the browser's answer, as JSON text) as the object the flows
 * check. Anything that is not a JSON object is refused here with the message a bad answer gets,
 * under the field's name; what is inside is the flow's to judge.
 */
export function credentialOfField(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : parseJson(text);
  } catch {
    parsed = undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new LatchkeyError('invalid_input', INVALID_CREDENTIAL, { param: 'credential' });
  return parsed as Record<string, unknown>;
}
