/**
 * The dummy provider's "authorization server" (socialaccount/providers/dummy.ts), as allauth's
 * /accounts/dummy/authenticate/: GET shows a form asking who to sign in as; POST sends the
 * browser back to the sign-in's callback with a signed code carrying what was entered (or with
 * error=access_denied for Cancel). For development and tests only: it refuses to be registered
 * when ENVIRONMENT is production.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LatchkeyError } from '../../core/errors.js';
import { msg, nmsg, type Message } from '../../core/i18n/message.js';
import { issueDummyCode, refuseDummyProviderInProduction } from '../../socialaccount/providers/dummy.js';
import { UID_MAX_LENGTH } from '../../socialaccount/model.js';
import type { HttpContext } from '../kit/context.js';
import { textField } from '../kit/input.js';
import { emptyForm, formFields, redirect, renderPage, type FormState } from './page.js';

const TEMPLATE = 'socialaccount/dummy_authenticate.html';
const TITLE = msg('Dummy provider');

/** Sign-in states are short random strings (43 characters from the flows); anything much longer is not one. */
const MAX_STATE_LENGTH = 200;
const MAX_REDIRECT_URI_LENGTH = 500;
const MAX_EMAIL_LENGTH = 254;
const MAX_NAME_LENGTH = 150;

export interface DummyAuthorizationPageOptions {
  ctx: HttpContext;
}

/** Where the form sends the browser: the sign-in's state and callback, as the authorization URL gave them. */
interface Return {
  state: string;
  redirectUri: string;
}

/** Registers GET and POST dummy_authenticate. Throws LatchkeyError('configuration_invalid') in production. */
export function registerDummyAuthorizationPage(scope: FastifyInstance, options: DummyAuthorizationPageOptions): void {
  const { ctx } = options;
  const { settings } = ctx.deps;
  refuseDummyProviderInProduction(settings.ENVIRONMENT);
  const siteOrigin = new URL(settings.SITE_URL).origin;

  /**
   * The state and callback, checked: the callback must be on this site, so that the page cannot
   * be used to send a browser (and a code) anywhere else.
   */
  function returnOf(source: unknown): Return | undefined {
    const state = textField(source, 'state');
    const redirectUri = textField(source, 'redirect_uri');
    if (state === undefined || state === '' || state.length > MAX_STATE_LENGTH) return undefined;
    if (redirectUri === undefined || redirectUri.length > MAX_REDIRECT_URI_LENGTH || !URL.canParse(redirectUri)) return undefined;
    return new URL(redirectUri).origin === siteOrigin ? { state, redirectUri } : undefined;
  }

  function show(request: FastifyRequest, reply: FastifyReply, back: Return, form: FormState, status = 200): Promise<FastifyReply> {
    return renderPage(ctx, request, reply, TEMPLATE, { title: TITLE, state: back.state, redirect_uri: back.redirectUri, form }, status);
  }

  function refuse(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const refused = msg('This page is reached from a sign-in with the dummy provider; the link that led here is incomplete or points off this site.');
    return renderPage(ctx, request, reply, TEMPLATE, { title: TITLE, refused }, 400);
  }

  scope.get(ctx.deps.urls.route('dummy_authenticate'), async (request, reply) => {
    const back = returnOf(request.query);
    if (back === undefined) return refuse(request, reply);
    return show(request, reply, back, emptyForm({ email_verified: 'true' }));
  });

  scope.post(ctx.deps.urls.route('dummy_authenticate'), async (request, reply) => {
    const back = returnOf(request.body);
    if (back === undefined) return refuse(request, reply);
    const fields = formFields(request.body, ['id', 'email', 'email_verified', 'name', 'action']);
    const callback = new URL(back.redirectUri);
    callback.searchParams.set('state', back.state);
    if (fields.action === 'cancel') {
      callback.searchParams.set('error', 'access_denied');
      return redirect(reply, callback.toString());
    }
    const values = { id: fields.id.trim(), email: fields.email.trim(), email_verified: fields.email_verified === 'true' ? 'true' : '', name: fields.name.trim() };
    const errors = fieldErrors(values);
    if (Object.keys(errors).length > 0) return show(request, reply, back, { values, errors }, 400);
    const person = { id: values.id, email: values.email, emailVerified: values.email_verified === 'true', name: values.name };
    let code: string;
    try {
      code = issueDummyCode(settings.SECRET_KEY, { person, state: back.state, redirectUri: back.redirectUri }, ctx.deps.clock.now());
    } catch (error) {
      if (!(error instanceof LatchkeyError)) throw error;
      return show(request, reply, back, { values, errors: { __all__: [error.text] } }, 400);
    }
    callback.searchParams.set('code', code);
    return redirect(reply, callback.toString());
  });
}

/** Django's words for a value longer than its field allows. */
function tooLong(max: number): Message {
  return nmsg('Ensure this value has at most {max} character.', 'Ensure this value has at most {max} characters.', max, { max });
}

function fieldErrors(values: { id: string; email: string; name: string }): Record<string, Message[]> {
  const errors: Record<string, Message[]> = {};
  if (values.id === '') errors.id = [msg('This field is required.')];
  else if (values.id.length > UID_MAX_LENGTH) errors.id = [tooLong(UID_MAX_LENGTH)];
  // Loose on purpose: what the address looks like is the sign-in pipeline's to judge, as with a real provider.
  if (values.email.length > MAX_EMAIL_LENGTH || (values.email !== '' && !/^[^\s@]+@[^\s@]+$/.test(values.email))) errors.email = [msg('Enter a valid email address.')];
  if (values.name.length > MAX_NAME_LENGTH) errors.name = [tooLong(MAX_NAME_LENGTH)];
  return errors;
}
