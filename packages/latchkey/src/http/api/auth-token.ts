import { isLatchkeyError } from '../../core/errors.js';
import { deleteApiToken } from '../../tokens/api-tokens.js';
import { obtainApiToken, TOKEN_INVALID_CREDENTIALS } from '../../tokens/flows/obtain-token.js';
import { clientOf } from '../kit/request-info.js';
import type { HttpContext } from '../kit/context.js';
import { checkCharFields, checkDictionary } from './fields.js';
import { sendDrfRefusal } from './respond.js';
import type { RegisteredView } from './view-runner.js';
import { fieldErrors } from './views.js';

export const AUTH_TOKEN_URL = '/api/auth-token/';
/** DRF's AuthTokenSerializer message for every refused credential, whatever the reason. */

const ERROR_SCHEMA = { $ref: '#/components/schemas/Error' };
const FIELD_ERRORS_SCHEMA = { $ref: '#/components/schemas/ValidationError' };

/**
 * POST /api/auth-token/ (DRF's ObtainAuthToken, with a `code` for users with a second factor) and
 * DELETE /api/auth-token/ (revoking the token that authenticates the request). The POST is a
 * login: the flow runs every stage, counts failures against the login rate limits and refuses
 * every bad credential alike. It reads no cookie, so a browser's session neither helps it (a
 * session stopped at the MFA step does not stand in for the code) nor makes it need a CSRF token;
 * the user is only ever the one the credentials name (a `user` or `userId` field is never read).
 */
export function authTokenView(ctx: HttpContext): RegisteredView {
  const byEmail = ctx.deps.settings.USERNAME_TYPE === 'email';
  return {
    url: AUTH_TOKEN_URL,
    options: { authentication: { post: 'none', delete: 'token' }, permissions: { delete: 'authenticated' } },
    view: {
      permission: 'allow_any',
      tag: 'auth-token',
      methods: {
        post: {
          operationId: 'auth_token_create',
          summary: 'Obtain the API token',
          description:
            'Logs in with the credentials and answers the user\'s token, creating it on the first call: the same key on every call until it is deleted. ' +
            'A user with two-factor authentication must also send `code` (a code from the authenticator app, or a recovery code). ' +
            'Send the key as `Authorization: Token <key>`.',
          requestBody: {
            type: 'object',
            required: ['username', 'password'],
            properties: {
              username: { type: 'string', description: byEmail ? 'The email address.' : 'The username, or an email address where the project accepts one.' },
              password: { type: 'string', format: 'password' },
              code: { type: 'string', description: 'The code from the authenticator app, or a recovery code: required for users with two-factor authentication.' },
            },
          },
          responses: {
            200: { type: 'object', required: ['token'], properties: { token: { type: 'string', readOnly: true } } },
            400: FIELD_ERRORS_SCHEMA,
            429: ERROR_SCHEMA,
          },
          async handler(request, reply) {
            const body = checkDictionary(request.body);
            if (!body.ok) throw fieldErrors({ non_field_errors: [body.error] });
            const read = checkCharFields(body.value, { username: {}, password: { trimWhitespace: false }, code: { required: false, allowBlank: true } });
            if (!read.ok) throw fieldErrors(read.errors);
            const { username = '', password = '', code = '' } = read.values;
            try {
              const { key } = await obtainApiToken(ctx.deps, { login: username, password, code, client: clientOf(request) });
              return { token: key };
            } catch (error) {
              if (isLatchkeyError(error, 'invalid_credentials')) throw fieldErrors({ non_field_errors: [TOKEN_INVALID_CREDENTIALS] });
              // A wrong code is the code field's error, wherever the flow says it arose.
              if (isLatchkeyError(error, 'incorrect_code')) throw fieldErrors({ code: [error.text] });
              return sendDrfRefusal(reply, error, { login: 'username' });
            }
          },
        },
        delete: {
          operationId: 'auth_token_destroy',
          summary: 'Delete the API token',
          description: 'Deletes the token the request is authenticated with: the key stops working at once, everywhere. The next POST creates a new one.',
          responses: { 204: { description: 'The token is deleted.' }, 401: ERROR_SCHEMA },
          async handler(request, _reply, user) {
            // Token authentication and the permission admit no request without a user.
            if (user) await deleteApiToken(ctx.deps, user, clientOf(request));
            return undefined;
          },
        },
      },
    },
  };
}
