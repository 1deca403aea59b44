/**
 * The `apple` provider (allauth's id and URLs: /accounts/apple/login/, its callback
 * /accounts/apple/login/callback/), following Apple's Sign in with Apple REST API
 * (https://developer.apple.com/documentation/sign_in_with_apple/sign_in_with_apple_rest_api).
 * An app is allauth's: client_id the Services ID (or several ids, comma-separated, the first used
 * for calls), secret the Key ID, key the Team ID, settings.certificate_key the .p8 private key.
 * A hidden app (an iOS bundle id used only for headless token login) needs none of the last three.
 */
import { LatchkeyError } from '../../../core/errors.js';
import { checkSettings } from '../app-settings.js';
import type { ProviderKind } from '../kind.js';
import { APPLE_SETTINGS, appleProvider } from './apple-provider.js';

/** Whether the app only verifies ID tokens (hidden: no button, no redirect sign-in, so no client secret to sign). */
function tokenOnly(settings: Readonly<Record<string, unknown>>): boolean {
  return settings.hidden === true;
}

export const appleProviderKind: ProviderKind = {
  id: 'apple',
  name: 'Apple',
  checkSettings(settings) {
    const required: Record<string, string> = tokenOnly(settings) ? {} : { certificate_key: 'the .p8 private key Apple gave for Sign in with Apple' };
    return checkSettings('apple', settings, { ...APPLE_SETTINGS, required });
  },
  checkApp(app) {
    if (tokenOnly(app.settings) || app.secret.trim() !== '') return undefined;
    return { key: 'secret', reason: 'required', message: 'a secret is required for apple (the Key ID of the .p8 key, shown on its View Key Details page)' };
  },
  // Settings are stored, and shown in the admin, as written: Apple's private key would be in clear.
  checkStored(app) {
    if (app.settings.certificate_key === undefined) return undefined;
    return {
      key: 'certificate_key',
      reason: 'invalid',
      message: 'certificate_key would be stored unencrypted: keep an Apple app that signs in by redirect in SOCIALACCOUNT_PROVIDERS, its key read from the environment (the database takes hidden, token-only Apple apps)',
    };
  },
  build(app, { http, clock }) {
    if (!tokenOnly(app.settings) && app.key.trim() === '') {
      throw new LatchkeyError('configuration_invalid', `The social app "${app.id}" has no key: for apple it is the Team ID (the App ID Prefix).`);
    }
    return appleProvider(app, http, clock);
  },
};

export const APPLE_PROVIDER_KINDS: readonly ProviderKind[] = [appleProviderKind];
