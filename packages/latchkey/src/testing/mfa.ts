import { Secret } from 'otpauth';
import type { ClientInfo } from '../core/client.js';
import type { Settings } from '../config/settings.js';
import { internalsOf, type Latchkey } from '../latchkey.js';
import type { ProjectTestLatchkey, TestLatchkey } from './latchkey.js';
import { totpParameters } from '../mfa/authenticators.js';
import { viewRecoveryCodes } from '../mfa/flows/recovery-codes.js';
import { activateTotp, totpSetup } from '../mfa/flows/totp.js';
import { addWebauthnKey, webauthnRegistrationOptions } from '../mfa/flows/webauthn.js';
import { SoftwareAuthenticator } from './webauthn-authenticator.js';
import { totpCode } from '../mfa/totp.js';
import type { User } from '../account/model.js';

const TEST_CLIENT: ClientInfo = { ip: '127.0.0.1', userAgent: 'test' };

/** The code an authenticator app holding `base32` shows at `at` (the test's clock), with the project's parameters. */
export function totpCodeAt(deps: { settings: Settings }, base32: string, at: Date): string {
  return totpCode(Secret.fromBase32(base32).bytes, at, totpParameters(deps.settings));
}

/** The authenticator app activateTotpFor gave a user: its secret, the recovery codes, and the code it shows now. */
export interface ActivatedTotp {
  /** The secret in base32, as the page shows it. */
  secret: string;
  recoveryCodes: string[];
  /** The code the app shows now, by the test's clock. */
  code(): string;
}

/**
 * Gives a user (who must have a verified address) an authenticator app and recovery codes through
 * the real flows, as if they had scanned the QR code just now. The code that activated it is used
 * up, so this moves the test clock on by one time step, as the person would take that long to log
 * out and back in: `code()` then gives a fresh code.
 */
export async function activateTotpFor(latchkey: Latchkey & Pick<ProjectTestLatchkey, 'clock'>, user: User): Promise<ActivatedTotp> {
  const { deps } = internalsOf(latchkey);
  const { clock } = latchkey;
  const setup = await totpSetup(deps, user);
  const now = deps.clock.now();
  await activateTotp(deps, { user, client: TEST_CLIENT, lastAuthenticatedAt: now, pending: setup.pending, code: totpCodeAt(deps, setup.secret, now) });
  const { unused } = await viewRecoveryCodes(deps, { user, lastAuthenticatedAt: now });
  clock.advance(deps.settings.MFA_TOTP_PERIOD * 1000);
  return { secret: setup.secret, recoveryCodes: unused, code: () => totpCodeAt(deps, setup.secret, deps.clock.now()) };
}

/**
 * Gives a user (with a verified address) a security key through the real flows, made by a
 * software authenticator for SITE_URL's origin: a passkey unless `passwordless` is false.
 */
export async function addWebauthnKeyFor(
  latchkey: Pick<TestLatchkey, 'deps'>,
  user: User,
  options: { passwordless?: boolean; name?: string; authenticator?: SoftwareAuthenticator } = {},
): Promise<{ authenticator: SoftwareAuthenticator; credentialId: string; authenticatorId: number }> {
  const { deps } = latchkey;
  const authenticator = options.authenticator ?? new SoftwareAuthenticator(new URL(deps.settings.SITE_URL).origin);
  const lastAuthenticatedAt = deps.clock.now();
  const { options: creation, ceremony } = await webauthnRegistrationOptions(deps, { user, lastAuthenticatedAt, passwordless: options.passwordless ?? true });
  const credential = authenticator.create(creation);
  const added = await addWebauthnKey(deps, { user, client: TEST_CLIENT, lastAuthenticatedAt, ceremony, credential, name: options.name });
  return { authenticator, credentialId: credential.id, authenticatorId: added.authenticator.id };
}
