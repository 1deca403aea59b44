/**
 * The mfa_trust stage: a login that passed its code waits for "trust this browser?", and completes
 * only for the account as it was when its first factor was proved.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { User } from '../account/model.js';
import { testDatabaseKinds } from '../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { activateTotpFor, type ActivatedTotp } from '../testing/mfa.js';
import { createUser, deactivateUser, setUserPassword } from '../account/users.js';
import { isTrustedBrowser } from '../mfa/trust.js';
import { loginWithPassword } from './password.js';
import { continueLogin, type PendingLoginState } from './pipeline.js';

const PASSWORD = 'a long enough passphrase';
const browser = { client: { ip: '203.0.113.7', userAgent: 'vitest' }, canTrustBrowser: true };

describe.each(testDatabaseKinds())('the question whether to trust this browser on %s', (kind) => {
  let latchkey: TestLatchkey;
  let ada: User;
  let totp: ActivatedTotp;
  afterEach(() => latchkey.destroy());

  /** Ada logs in with her password and a right code from a browser that may be asked to trust. */
  async function waitingForTrust(): Promise<PendingLoginState> {
    latchkey = await createTestLatchkey({ kind, settings: { MFA_TRUST_ENABLED: true } });
    ada = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: PASSWORD, emailVerified: true });
    totp = await activateTotpFor(latchkey, ada);
    const stopped = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, ...browser });
    if (stopped.status !== 'stopped') throw new Error('expected the login to stop for the code');
    const asked = await continueLogin(latchkey.deps, stopped.pending, { code: totp.code() }, browser);
    if (asked.status !== 'stopped' || asked.stage !== 'mfa_trust') throw new Error(`expected the login to ask about trust, got ${asked.status}`);
    expect(asked.pending.proofs).toEqual([{ kind: 'password' }, { kind: 'totp' }]);
    return asked.pending;
  }

  it('completes on either answer while the account is as the login found it, with a cookie only for yes', async () => {
    const pending = await waitingForTrust();
    const declined = await continueLogin(latchkey.deps, pending, { trust: false }, browser);
    expect(declined).toMatchObject({ status: 'authenticated', user: { id: ada.id }, proofs: [{ kind: 'password' }, { kind: 'totp' }] });
    expect(declined).not.toHaveProperty('trustToken');
    const trusted = await continueLogin(latchkey.deps, pending, { trust: true }, browser);
    if (trusted.status !== 'authenticated' || trusted.trustToken === undefined) throw new Error('expected a trust token');
    expect(isTrustedBrowser(latchkey.deps, ada, await latchkey.deps.store.authenticators.listForUser(ada.id), trusted.trustToken)).toBe(true);
  });

  it('keeps waiting without an answer, and never asks for the code again', async () => {
    const pending = await waitingForTrust();
    expect(await continueLogin(latchkey.deps, pending, {}, browser)).toMatchObject({ status: 'stopped', stage: 'mfa_trust' });
    expect(await continueLogin(latchkey.deps, pending, { code: 'not a code', trust: true }, browser)).toMatchObject({ status: 'authenticated' });
  });

  it('ends once the password has changed', async () => {
    const pending = await waitingForTrust();
    await setUserPassword(latchkey.deps, ada, 'another fine passphrase');
    expect(await continueLogin(latchkey.deps, pending, { trust: true }, browser)).toEqual({ status: 'ended' });
  });

  it('goes no further once the account is deactivated', async () => {
    const pending = await waitingForTrust();
    await deactivateUser(latchkey.deps, ada);
    expect(await continueLogin(latchkey.deps, pending, { trust: true }, browser)).toMatchObject({ status: 'inactive' });
  });

  it('ends for a forged mark or an account that is gone', async () => {
    const pending = await waitingForTrust();
    expect(await continueLogin(latchkey.deps, { ...pending, credentialMark: 'f'.repeat(pending.credentialMark.length) }, { trust: true }, browser)).toEqual({ status: 'ended' });
    expect(await continueLogin(latchkey.deps, { ...pending, credentialMark: '' }, { trust: true }, browser)).toEqual({ status: 'ended' });
    // Another account's id with Ada's mark: the mark binds the user id too.
    const bob = await createUser(latchkey.deps, { username: 'bob', email: 'bob@example.com', password: PASSWORD, emailVerified: true });
    expect(await continueLogin(latchkey.deps, { ...pending, userId: bob.id }, { trust: true }, browser)).toEqual({ status: 'ended' });
    expect(await continueLogin(latchkey.deps, { ...pending, userId: 999_999 }, { trust: true }, browser)).toEqual({ status: 'ended' });
  });

  it('is not asked of a client that keeps no cookie, nor after a trusted browser skipped the code', async () => {
    await waitingForTrust();
    const app = { client: browser.client };
    const stopped = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, ...app });
    if (stopped.status !== 'stopped') throw new Error('expected the login to stop for the code');
    latchkey.clock.advance(30_000);
    expect(await continueLogin(latchkey.deps, stopped.pending, { code: totp.code() }, app)).toMatchObject({ status: 'authenticated' });
    const trusted = await continueLogin(latchkey.deps, (await waitingForTrustAgain()).pending, { trust: true }, browser);
    if (trusted.status !== 'authenticated') throw new Error('expected the login to complete');
    const skipped = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, ...browser, mfaTrustToken: trusted.trustToken });
    expect(skipped).toMatchObject({ status: 'authenticated', proofs: [{ kind: 'password' }, { kind: 'trusted_browser' }] });
  });

  /** Another login of Ada's to the trust question, a time step later (a code works once). */
  async function waitingForTrustAgain() {
    latchkey.clock.advance(30_000);
    const stopped = await loginWithPassword(latchkey.deps, { login: 'ada', password: PASSWORD, ...browser });
    if (stopped.status !== 'stopped') throw new Error('expected the login to stop for the code');
    const asked = await continueLogin(latchkey.deps, stopped.pending, { code: totp.code() }, browser);
    if (asked.status !== 'stopped') throw new Error('expected the login to ask about trust');
    return asked;
  }
});
