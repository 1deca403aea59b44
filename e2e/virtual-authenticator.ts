/**
 * Chromium's own WebAuthn virtual authenticator (the DevTools protocol's WebAuthn domain, through
 * playwright-core's CDP session): a platform authenticator that holds discoverable credentials,
 * verifies the person, and answers every prompt at once, as a person touching the sensor would.
 * The site must be visited as http://localhost:PORT (the harness's `hostname: 'localhost'`):
 * Chromium refuses an IP address as a relying party id.
 */
import type { CDPSession, Page } from 'playwright-core';

export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  userHandle?: string;
  signCount: number;
}

export class VirtualAuthenticator {
  private constructor(
    private readonly session: CDPSession,
    readonly authenticatorId: string,
  ) {}

  /** Plugs an authenticator into this page's browser tab; it stays there across navigations. */
  static async attach(page: Page): Promise<VirtualAuthenticator> {
    const session = await page.context().newCDPSession(page);
    await session.send('WebAuthn.enable');
    const { authenticatorId } = await session.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    return new VirtualAuthenticator(session, authenticatorId);
  }

  /** The credentials it holds (for the site or any other). */
  async credentials(): Promise<VirtualCredential[]> {
    const { credentials } = await this.session.send('WebAuthn.getCredentials', { authenticatorId: this.authenticatorId });
    return credentials;
  }
}
