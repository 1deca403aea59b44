/**
 * A SAML app's service-provider URLs (allauth's), for whichever door serves them (the pages, or
 * the headless API alone under HEADLESS_ONLY):
 * - `acs/`: the IdP's browser POSTs the response here from the IdP's site, so the browser leaves
 *   our SameSite=Lax session cookie behind. The response is parked for a minute, server-side,
 *   under a cookie that only the finish URL receives, and the browser is sent there;
 * - `acs/finish/`: a same-site GET that carries the session: the response is taken (once) and
 *   checked, its InResponseTo must name a sign-in this browser started, and the login goes through
 *   the same pipeline as every other;
 * - `sls/`: single logout; `metadata/`: the SP metadata an IdP administrator imports.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SIGN_IN_STATE_SECONDS, type SignInState } from '../../socialaccount/flows/provider-login.js';
import { acceptSamlLogoutRequest, verifySamlAnswer } from '../../socialaccount/flows/saml-login.js';
import { ProviderError, stateOfSamlRequestId, type SamlLogoutMessage } from '../../socialaccount/providers/provider.js';
import { claimedRequestId, isSamlResponse } from '../../socialaccount/providers/saml/response.js';
import { MAX_DOCUMENT_BYTES } from '../../socialaccount/providers/saml/xml.js';
import type { LatchkeyUrls } from '../../config/url-names.js';
import { msg, type Message } from '../../core/i18n/message.js';
import type { HttpContext } from '../kit/context.js';
import { presentCallbackResult, settleProviderAnswer, takeClaimedSignIn, type CallbackPresenter } from './provider-callback.js';
import { answeredOverLoginLimit, parkPost, takeParkedPost, type ParkingSpot } from '../kit/parked-post.js';
import { inRequestLanguage } from '../kit/request-language.js';
import { redirectTargetOr } from '../kit/safe-redirect.js';
import { signOut } from '../kit/sign-out.js';

interface ParkedResponse {
  organization: string;
  samlResponse: string;
  relayState: string;
}

/** Where an ACS post waits for its finish URL (parked-post.ts). */
function parkingSpot(urls: LatchkeyUrls, organization: string): ParkingSpot {
  return { cookie: 'saml_acs', key: '_saml_acs', finishPath: urls.urlFor('saml_finish_acs', { organization }) };
}

function formField(body: unknown, name: string): string | undefined {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A logout message at the SLS: each parameter once (sent twice, which copy a check read would be a guess), and the raw query its signature covers. */
function logoutMessageOf(request: FastifyRequest): SamlLogoutMessage | undefined {
  const rawQuery = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (Object.hasOwn(fields, name)) return undefined;
    fields[name] = value;
  }
  return { fields, rawQuery };
}

export function registerSamlEndpoints(scope: FastifyInstance, ctx: HttpContext, presentOther: CallbackPresenter): void {
  const { deps } = ctx;
  const { urls } = deps;
  const samlOf = async (request: FastifyRequest) => {
    const { organization } = request.params as { organization: string };
    const configured = await deps.providerDirectory.samlProvider(organization);
    return configured?.provider.protocol === 'saml' ? { configured, saml: configured.provider.saml, organization } : undefined;
  };
  // Plain text for the person's browser, in the request's language.
  const refused = (reply: FastifyReply, text: Message) => reply.code(400).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(inRequestLanguage(reply.request, text));

  // A signed response with its certificate and many attributes outgrows the pages' form limit; the
  // ACS takes what the checks will read (base64 and its form encoding), and refuses more itself.
  scope.post(urls.route('saml_acs'), { config: { csrf: false }, bodyLimit: 3 * MAX_DOCUMENT_BYTES }, async (request, reply) => {
    const found = await samlOf(request);
    if (!found) return reply.callNotFound();
    if (await answeredOverLoginLimit(ctx, request, reply)) return reply;
    const samlResponse = formField(request.body, 'SAMLResponse');
    if (samlResponse === undefined) return refused(reply, msg('The identity provider sent no SAMLResponse.'));
    // Base64 of the largest document the checks will read: anything longer is refused before it is stored.
    if (samlResponse.length > (MAX_DOCUMENT_BYTES * 4) / 3 + 4) return refused(reply, msg('The SAMLResponse is too large.'));
    const parked: ParkedResponse = { organization: found.organization, samlResponse, relayState: formField(request.body, 'RelayState') ?? '' };
    return parkPost(ctx, reply, parkingSpot(urls, found.organization), parked);
  });

  scope.get(urls.route('saml_finish_acs'), async (request, reply) => {
    const found = await samlOf(request);
    if (!found) return reply.callNotFound();
    const { configured, saml, organization } = found;
    const parked = await takeParkedPost<ParkedResponse>(ctx, request, reply, parkingSpot(urls, organization));
    const failed = { kind: 'failed', error: 'unknown' } as const;
    if (!parked || parked.organization !== organization) {
      request.log.warn({ provider: configured.provider.id }, 'SAML finish without a parked response (expired, used, or another browser)');
      return presentOther(request, reply, failed, undefined);
    }

    const requestId = claimedRequestId(parked.samlResponse);
    let signIn: SignInState | undefined;
    if (!isSamlResponse(parked.samlResponse)) {
      request.log.warn({ provider: configured.provider.id }, 'SAML finish: the SAMLResponse is not a SAML Response');
    } else if (requestId !== undefined) {
      signIn = await takeClaimedSignIn(ctx, request, configured.provider.id, stateOfSamlRequestId(requestId));
    } else if (saml.rejectsUnsolicited) {
      request.log.warn({ provider: configured.provider.id }, 'unsolicited SAML response refused (reject_idp_initiated_sso)');
    } else {
      // IdP-initiated: no request to bind it to, so nothing from it is trusted as a destination
      // but a path on this site; the replay cache keeps it to one use.
      const now = deps.clock.now().getTime();
      signIn = { provider: configured.provider.id, process: 'login', next: redirectTargetOr(ctx.deps.adapter, parked.relayState, ''), pending: {}, expiresAt: now + SIGN_IN_STATE_SECONDS * 1000 };
    }
    if (!signIn) return presentOther(request, reply, failed, undefined);
    const result = await settleProviderAnswer(ctx, request, reply, configured, signIn, () => verifySamlAnswer(deps, configured.provider.id, saml, parked.samlResponse, requestId));
    return presentCallbackResult(ctx, reply, result, signIn, (presented) => presentOther(request, reply, presented, signIn));
  });

  /**
   * Single logout, HTTP-Redirect binding: an IdP's LogoutRequest signs this browser out when it
   * names the SAML sign-in the session came through, and is answered either way (Success only when
   * a session ended). Latchkey starts no single logout itself, so anything else here (a
   * LogoutResponse included) is refused.
   */
  scope.get(urls.route('saml_sls'), async (request, reply) => {
    const found = await samlOf(request);
    if (!found) return reply.callNotFound();
    const providerId = found.configured.provider.id;
    const message = logoutMessageOf(request);
    try {
      if (message === undefined) throw new ProviderError('failed', `${providerId}: a logout message parameter came twice`);
      const accepted = await acceptSamlLogoutRequest(deps, providerId, found.saml, message, await ctx.sessions.samlSignIn(request));
      if (accepted.signOut) await signOut(ctx, request, reply);
      else request.log.warn({ provider: providerId }, 'SAML single logout ended no session: the LogoutRequest does not name the SAML sign-in of this session');
      return reply.code(302).header('cache-control', 'no-store').redirect(accepted.answerUrl);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      request.log.warn({ provider: providerId, reason: error.message }, 'SAML single logout refused');
      return refused(reply, msg('The logout message was refused.'));
    }
  });

  scope.get(urls.route('saml_metadata'), async (request, reply) => {
    const found = await samlOf(request);
    if (!found) return reply.callNotFound();
    return reply.header('cache-control', 'no-store').type('application/samlmetadata+xml; charset=utf-8').send(found.saml.metadata());
  });
}
