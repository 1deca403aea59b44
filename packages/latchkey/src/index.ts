export { createLatchkey, passwordHashingFrom, type CreateLatchkeyOptions, type Latchkey, type LatchkeyLog } from './latchkey.js';
export type { OutageLog } from './cache/redis-connection.js';
export { loadSettings, environmentFromNodeEnv, type ProjectSettings, type LoadSettingsOptions } from './config/load.js';
export type { Settings, SettingValues, SettingName, Environment, UsernameType } from './config/settings.js';
export { LatchkeyError, isLatchkeyError, type LatchkeyErrorCode } from './core/errors.js';
export { systemClock, ManualClock, type Clock } from './core/clock.js';
export type { LatchkeyDeps } from './deps.js';
export type { User, EmailAddress } from './account/model.js';
export type { StoredSession } from './sessions/model.js';
export type { Store, Repositories } from './store.js';
export { AccountAdapter } from './account/adapter.js';
export { SocialAccountAdapter, type SocialLogin, type ProviderUserData, type NewSocialUser } from './socialaccount/adapter.js';
export { openProviderToken } from './socialaccount/tokens.js';
// A provider of the project's own, on the OAuth 2.0 base: createLatchkey's socialProviderKinds (docs/social.md).
export { oauth2ProviderKind, type OAuth2ProviderDescription, type MappedProfile, type ProfileInput, type ProfileRequests } from './socialaccount/providers/oauth2.js';
export { namedOpenIdConnectKind, type NamedOpenIdConnectDescription } from './socialaccount/providers/named-openid-connect.js';
export { aBoolean, anEndpoint, aText, aTextList, oneOf, type SettingProblem, type SettingReader } from './socialaccount/providers/app-settings.js';
export { isVouchedFor, textOf } from './socialaccount/providers/profile-fields.js';
export type { ProviderKind, ProviderContext } from './socialaccount/providers/kind.js';
export { createUser, setUserPassword, deactivateUser, validatePasswordStrength, type CreateUserInput } from './account/users.js';
export { cleanName, NAME_MAX_LENGTH } from './account/names.js';
export { verifyCredentials, findUserByLogin } from './account/credentials.js';
export { CSRF_COOKIE, CSRF_FORM_FIELD } from './http/kit/csrf.js';
export { handleUnexpectedError } from './http/kit/unexpected-errors.js';
export { loggerOptions } from './http/kit/logger-options.js';
export type { Mailer, EmailMessage, MailOutcome, MailOutbox, OutboxEntry } from './mail/ports.js';
export type { MailOutboxPolicy } from './mail/outbox-sender.js';
export type { ChangeWriter } from './account/changes.js';
export type { ClientInfo } from './core/client.js';
export { clientOf } from './http/kit/request-info.js';
export { updateProfile, type UpdateProfileInput } from './account/flows/profile.js';
// The API layer's vocabulary for a project's /api/ views. Only these small modules: the layer
// itself (http/api/index.ts) is loaded by the plugin when a project turns it on.
export { ApiError, notFound, fieldErrors, type ApiPermission, type ApiMethod, type ApiOperation, type ApiView, type ApiRoutes, type ApiOptions, type JsonSchema } from './http/api/views.js';
export { readCharField, readCharFields, expectDictionary, type CharFieldOptions, type CharFieldResult } from './http/api/fields.js';
export { issueApiToken, deleteApiToken } from './tokens/api-tokens.js';
