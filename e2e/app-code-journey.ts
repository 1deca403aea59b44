/**
 * The two halves of "a provider sign-in still asks for the authenticator app's code", shared by
 * the social sign-in journeys (OpenID Connect, SAML): turning the app on from the MFA page, and,
 * on the code page a later sign-in stops at, a wrong code refused and the next time step's code
 * accepted (the activation's own code is spent).
 */
import { expect } from 'vitest';
import { appCode, freshCode, PERIOD_MS, sleep } from './authenticator-app.js';
import type { Person } from './journey.js';

/** A signed-in person turns the app on; its secret and the time step of the code the activation used. */
export async function activateAuthenticatorApp(person: Person): Promise<{ secret: string; activationStep: number }> {
  await person.visit('/accounts/2fa/', 'mfa-index');
  expect(await person.page.locator('#mfa-totp-status').innerText()).toBe('Inactive');
  await person.follow('Activate', 'activate-form', person.page.locator('main'));
  expect(person.pathname()).toBe('/accounts/2fa/totp/activate/');
  await person.page.locator('details summary').click();
  const secretElement = person.page.locator('#mfa-totp-secret');
  await secretElement.waitFor({ state: 'visible' });
  const secret = (await secretElement.innerText()).trim();
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  const activation = await freshCode(secret, 3_000);
  await person.fill({ code: activation.code });
  await person.press('Activate', 'recovery-codes-after-activation');
  expect(person.pathname()).toBe('/accounts/2fa/recovery-codes/');
  return { secret, activationStep: activation.step };
}

/** At the code page after a sign-in: not signed in yet, a wrong code refused, then the app's next code signs in. */
export async function passCodePage(person: Person, app: { secret: string; activationStep: number }): Promise<void> {
  expect(person.pathname()).toBe('/accounts/2fa/authenticate/');
  expect(await person.heading()).toBe('Two-factor authentication');
  expect(await person.homeStatus('home-not-yet')).toContain('You are not signed in.');
  await person.visit('/accounts/2fa/authenticate/', 'code-page');
  const codeForm = person.page.locator('form', { has: person.page.locator('[name=code]') });

  const wrongCode = appCode(app.secret, Date.now()) === '000000' ? '111111' : '000000';
  await person.fill({ code: wrongCode });
  const wrong = await person.press('Sign in', 'wrong-code', codeForm);
  expect(wrong.status()).toBe(400);
  expect(await person.formErrors()).toEqual(['Incorrect code.']);

  // The code used for the activation works no more: the next one, once its time step has come.
  const nextStepAt = (app.activationStep + 1) * PERIOD_MS;
  if (Date.now() < nextStepAt + 1000) await sleep(nextStepAt + 1000 - Date.now());
  const login = await freshCode(app.secret, 3_000);
  expect(login.step).toBeGreaterThan(app.activationStep);
  await person.fill({ code: login.code });
  await person.press('Sign in', 'signed-in-with-app-code', codeForm);
}
