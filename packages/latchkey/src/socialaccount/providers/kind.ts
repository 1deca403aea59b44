/**
 * A kind of provider Latchkey can sign in with (`openid_connect`, `dummy`, a named provider such as
 * `github`): what the registry (registry.ts) knows of it. The directory builds one provider per app
 * of a kind; start-up and the stored apps' flow check each app's settings with the kind's check,
 * the same one its build runs, so that an app is refused with one clear line before it is used.
 */
import type { Settings } from '../../config/settings.js';
import type { Clock } from '../../core/clock.js';
import type { ProviderApp } from '../apps.js';
import type { SettingProblem } from './app-settings.js';
import type { SettingsEndpoint } from './private-hosts.js';
import type { ProviderHttp, SignInProvider } from './provider.js';

/** What building a provider may use besides its app. */
export interface ProviderContext {
  settings: Settings;
  clock: Clock;
  /** The injectable fetch, SOCIALACCOUNT_REQUESTS_TIMEOUT and where a provider may be. */
  http: ProviderHttp;
}

/**
 * A kind of provider Latchkey can sign in with (`github`, `openid_connect`): how to check an app's
 * settings and build its provider. A project adds its own through createLatchkey's `socialProviderKinds`.
 */
export interface ProviderKind {
  /** The kind's id: the key in SOCIALACCOUNT_PROVIDERS and a stored app's `provider` (lower-case letters, digits and `_`). */
  readonly id: string;
  /**
   * How the admin's form and messages name it: `OpenID Connect`, `GitHub`; and the name an app of it
   * goes by when the app has none of its own (allauth's provider.name: the app's name, else the
   * provider class's), on the pages' buttons, in the headless configuration and in the admin.
   */
  readonly name: string;
  /**
   * The segment of its app's URLs (/accounts/<slug>/login/ and its callback) when it is not the id:
   * allauth serves amazon_cognito at `amazon-cognito` (its get_slug), because Cognito refuses "_"
   * in a callback URL, and the callback URL registered with the provider must stay the same when a
   * project moves from allauth. Lower-case letters, digits, "-" and "_"; the id is unchanged
   * everywhere else (SOCIALACCOUNT_PROVIDERS, SocialAccount.provider, the headless API).
   */
  readonly slug?: string;
  /**
   * Whether an operator may keep an app of it in the database (the admin, `manage socialapp add`);
   * true unless said. The dummy is not: it signs anyone in as anyone, and a row would outlive the
   * development environment it was added in.
   */
  readonly storable?: boolean;
  /** What is wrong with an app's settings for this kind, or undefined (app-settings.ts's checkSettings with the kind's spec). */
  checkSettings(settings: Readonly<Record<string, unknown>>): SettingProblem | undefined;
  /**
   * What is wrong with the app beyond its settings' shape, or undefined: rules that need its other
   * fields too (a SAML app's private key may be its secret, which the database keeps sealed).
   * Start-up and the stored apps' flow ask it after checkSettings.
   */
  checkApp?(app: Pick<ProviderApp, 'settings' | 'secret' | 'key'>): SettingProblem | undefined;
  /**
   * What is wrong with keeping the app in the database, beyond checkApp: settings are stored and
   * shown as written, so a key that must stay secret belongs in the sealed secret instead.
   */
  checkStored?(app: Pick<ProviderApp, 'settings'>): SettingProblem | undefined;
  /**
   * The provider's URLs the app's settings give (an issuer, endpoints that replace discovery's, a
   * metadata URL), each with the setting that gives it; a value that is no usable URL is left out,
   * for checkSettings to refuse. In production, start-up, the stored apps' flow and the directory
   * refuse an app with one on a loopback or private address (private-hosts.ts). Absent for a kind
   * whose addresses are fixed: every request a provider makes is held to the same rule as it
   * connects (provider-fetch.ts).
   */
  endpoints?(settings: Readonly<Record<string, unknown>>): readonly SettingsEndpoint[];
  /** Stops start-up when the settings configure an app of this kind where it must not run (the dummy in production); throws LatchkeyError('configuration_invalid'). */
  checkEnvironment?(settings: Settings): void;
  /** The provider for one app of this kind. Throws LatchkeyError('configuration_invalid') for settings checkSettings refuses. */
  build(app: ProviderApp, context: ProviderContext): SignInProvider;
}
