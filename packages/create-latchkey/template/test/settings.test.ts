/**
 * The ways in that src/config/settings.ts turns on for a new project (login by code, security keys
 * and passkey login), the two it leaves off (verification by code, passkey signup), and turning
 * those two on together from the environment, as its comment says.
 */
import { loadSettings } from '@latchkey/core';
import { describe, expect, it } from 'vitest';
import { projectSettings } from '../src/config/settings.js';

const TEST_ENV = { NODE_ENV: 'test' };
const LOCAL_ENV = { NODE_ENV: 'development', LATCHKEY_SECRET_KEY: 'a-local-secret-key-for-this-test-only-0123456789' };
const BOTH_ON = { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED: 'true', LATCHKEY_MFA_PASSKEY_SIGNUP_ENABLED: 'true' };

describe("the project's ways in", () => {
  it('offers login by code, security keys and passkey login, and leaves verification by code and passkey signup off', () => {
    const settings = loadSettings(projectSettings, { env: TEST_ENV });
    expect(settings.ACCOUNT_LOGIN_BY_CODE_ENABLED).toBe(true);
    expect(settings.MFA_SUPPORTED_TYPES).toEqual(['totp', 'recovery_codes', 'webauthn']);
    expect(settings.MFA_PASSKEY_LOGIN_ENABLED).toBe(true);
    expect(settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED).toBe(false);
    expect(settings.MFA_PASSKEY_SIGNUP_ENABLED).toBe(false);
  });

  it('turns verification by code and passkey signup on together where verification is mandatory', () => {
    const settings = loadSettings(projectSettings, { env: { ...TEST_ENV, ...BOTH_ON } });
    expect(settings.ACCOUNT_EMAIL_VERIFICATION).toBe('mandatory');
    expect(settings.ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED).toBe(true);
    expect(settings.MFA_PASSKEY_SIGNUP_ENABLED).toBe(true);
  });

  it('refuses passkey signup alone, or where verification is optional (local mode), naming what it needs', () => {
    const needs = /MFA_PASSKEY_SIGNUP_ENABLED=true needs LATCHKEY_ACCOUNT_EMAIL_VERIFICATION=mandatory and LATCHKEY_ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED=true/;
    expect(() => loadSettings(projectSettings, { env: { ...TEST_ENV, LATCHKEY_MFA_PASSKEY_SIGNUP_ENABLED: 'true' } })).toThrow(needs);
    expect(() => loadSettings(projectSettings, { env: { ...LOCAL_ENV, ...BOTH_ON } })).toThrow(needs);
    const local = loadSettings(projectSettings, { env: { ...LOCAL_ENV, ...BOTH_ON, LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
    expect(local.MFA_PASSKEY_SIGNUP_ENABLED).toBe(true);
    // Passkeys belong to the site's host name: locally, localhost (browsers refuse an IP address).
    expect(new URL(local.SITE_URL).hostname).toBe('localhost');
  });
});
