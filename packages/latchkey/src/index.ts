/**
 * @latchkey/core: the public API. Everything a project may rely on is exported here (and from the
 * `cli`, `testing` and `testing/smtp` entries); it changes only deliberately, through the API
 * report (packages/latchkey/api/latchkey.api.md) that CI compares. docs/extending.md explains it.
 */

// Starting Latchkey, and what it gives the project.
export { createLatchkey, type CreateLatchkeyOptions, type Latchkey, type LatchkeyLog } from './latchkey.js';
export type { ProjectMigration, ProjectMigrationContext, ProjectMigrations } from './storage/migrations/project.js';
export { addUserFieldColumn, dropUserFieldColumn } from './storage/migrations/project.js';
export { addUserFieldSearchIndex, dropUserFieldSearchIndex } from './storage/kysely/user-search.js';
// The project's own user fields (docs/user-fields.md).
export {
  defineUserFields,
  USER_FIELD_TYPES,
  type ProjectUserFields,
  type UserField,
  type UserFieldAdmin,
  type UserFieldDeclaration,
  type UserFieldSet,
  type UserFieldType,
  type UserFieldValue,
  type UserFieldValueOf,
  type UserFieldValues,
} from './core/user-fields.js';
export type { OutageLog } from './cache/redis-connection.js';
export type {
  AuthenticatorSummary,
  LatchkeyApiTokens,
  LatchkeyAudit,
  LatchkeyAuthenticators,
  LatchkeyEmailAddresses,
  LatchkeyEvents,
  LatchkeyMail,
  LatchkeyOperations,
  LatchkeySessions,
  LatchkeySocialAccounts,
  LatchkeyUserFields,
  LatchkeyUsers,
  NewConnection,
  ProjectMail,
  ProviderTokens,
  SessionSummary,
  StartedSession,
  UserUpdate,
} from './facade/index.js';
export type { UserFieldInput } from './http/kit/user-field-form.js';
export type { RouteGuard, RouteGuards } from './http/guards.js';
// Declares `request.user` on Fastify's requests for the project's code as for Latchkey's.
import './http/kit/request-user.js';
export type { CreateUserInput } from './account/users.js';
export type { AccountEvent, AccountEventHandler, AccountEventName } from './account/events.js';
export type { User, EmailAddress, AuditRecord } from './account/model.js';
export type { SocialAccount } from './socialaccount/model.js';
export type { AuthenticatorType } from './config/choices.js';
export type { AdminModel, AdminAction } from './admin/model.js';
export type { ClientInfo } from './core/client.js';
export { clientOf } from './http/kit/request-info.js';
export { NAME_MAX_LENGTH } from './account/names.js';
export { urlFor, ACCOUNT_URLS, ADMIN_URLS, type UrlName, type AdminUrlName, type RouteName, type UrlParams, type UrlQuery } from './config/url-names.js';

// Settings.
export { loadSettings, environmentFromNodeEnv, type ProjectSettings, type LoadSettingsOptions } from './config/load.js';
export type { Settings, SettingValues, SettingName, Environment, UsernameType } from './config/settings.js';

// Errors, and the clock.
export { LatchkeyError, isLatchkeyError, refusalsOf, type LatchkeyErrorCode } from './core/errors.js';
export { msg, msgid, nmsg, pmsg, type Message, type MessageParams } from './core/i18n/message.js';
export type { Translator } from './core/i18n/catalogs.js';
export { systemClock, ManualClock, type Clock } from './core/clock.js';

// The hook points: adapters, and providers of the project's own (docs/social.md).
export { AccountAdapter, type MailToRender, type NewUserFields, type PasswordOwner, type RenderTemplate, type SignupSubmission, type UserToSave } from './account/adapter.js';
export type { UsernameTaken } from './account/usernames.js';
export { BUILT_IN_LOGIN_STAGES, type BuiltInLoginStage, type CustomLoginStage, type LoginStageEntry } from './account/login-stages.js';
export {
  SocialAccountAdapter,
  type SocialLogin,
  type SocialLoginAttempt,
  type SocialLoginDecision,
  type SocialLoginUsers,
  type ProviderUserData,
  type NewSocialUser,
} from './socialaccount/adapter.js';
export { oauth2ProviderKind, type OAuth2ProviderDescription, type MappedProfile, type ProfileInput, type ProfileRequests } from './socialaccount/providers/oauth2.js';
export { namedOpenIdConnectKind, type NamedOpenIdConnectDescription } from './socialaccount/providers/named-openid-connect.js';
export { aBoolean, anEndpoint, aText, aTextList, oneOf, type SettingProblem, type SettingReader } from './socialaccount/providers/app-settings.js';
export { isVouchedFor, textOf } from './socialaccount/providers/profile-fields.js';
export type { ProviderKind, ProviderContext } from './socialaccount/providers/kind.js';

// Mail: a mailer of the project's own (createLatchkey's `mailer`), and the outbox's retries.
export type { Mailer, EmailMessage, MailOutcome } from './mail/ports.js';
export type { MailOutboxPolicy } from './mail/outbox-sender.js';

// The project's Fastify app: Latchkey's error handler, log options and CSRF names.
export { CSRF_COOKIE, CSRF_FORM_FIELD } from './http/kit/csrf.js';
export { handleUnexpectedError } from './http/kit/unexpected-errors.js';
export { logDestination, loggerOptions, type LogDestination, type LoggerOptions, type LogOutput } from './http/kit/logger-options.js';
export { startupBanner } from './config/startup-banner.js';
export type { LatchkeyPluginOptions } from './http/plugin.js';
export type { FlashMessage } from './http/kit/html-page.js';
export type { OnRequestHook } from './http/kit/strict-transport-security.js';

// The API layer's vocabulary for a project's /api/ views. Only these small modules: the layer
// itself (http/api/index.ts) is loaded by the plugin when a project turns it on.
export { ApiError, notFound, fieldErrors, type ApiPermission, type ApiMethod, type ApiOperation, type ApiView, type ApiRoutes, type ApiOptions, type JsonSchema } from './http/api/views.js';
export { readCharField, readCharFields, expectDictionary, type CharFieldOptions, type CharFieldResult } from './http/api/fields.js';
