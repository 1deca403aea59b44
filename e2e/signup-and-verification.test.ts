/**
 * Signing up on the example site (a username project), then email
 * verification, mandatory and optional, with the confirmation link followed from the mail the
 * site sent to a real SMTP server.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsEnabled, linkFromEmail, type RunningSite } from './harness.js';
import { JOURNEY_TIMEOUT_MS, Person, SETUP_TIMEOUT_MS, emailsTo, expectMessage, newAccount, startSitesAndBrowser, waitForEmail } from './journey.js';

const CONFIRM_SUBJECT = 'Please confirm your email address';

describe.runIf(browserTestsEnabled())('signup and email verification', () => {
  // Two sites, started together: one per verification mode.
  let mandatory: RunningSite;
  let optional: RunningSite;
  let browser: Browser;
  /** The account that already has an address, made with the CLI while the first journeys run. */
  const owner = newAccount('owner');
  let ownerCreated: Promise<unknown>;

  beforeAll(async () => {
    let sites: RunningSite[];
    ({ sites, browser } = await startSitesAndBrowser([
      { env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } },
      { env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'optional' } },
    ]));
    [mandatory, optional] = sites as [RunningSite, RunningSite];
    // The CLI, so that no confirmation mail went to the address in the last minutes (the notice
    // below is limited like one).
    ownerCreated = mandatory.manage(['createsuperuser', '--username', owner.username, '--email', owner.email, '--noinput'], {
      LATCHKEY_SUPERUSER_PASSWORD: owner.password,
    });
    ownerCreated.catch(() => undefined);
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.allSettled([browser?.close(), mandatory?.stop(), optional?.stop()]);
  }, SETUP_TIMEOUT_MS);

  describe('under mandatory verification', () => {
    let site: RunningSite;
    beforeAll(() => {
      site = mandatory;
    });

    it('signs up, is refused login until the mailed link is confirmed, then signs in', async () => {
      const ada = newAccount('ada');
      const person = await Person.open(browser, site);

      // From the login page, as a newcomer would: the sign-up link in the header.
      await person.visit('/accounts/login/', 'login-page');
      await person.follow('Sign up', 'signup-form', person.nav());
      expect(await person.heading()).toBe('Sign up');
      await person.fill({ email: ada.email, username: ada.username, password1: ada.password, password2: ada.password });
      const sent = await person.press('Sign up', 'verification-sent');
      expect(sent.status()).toBe(200);
      expect(person.pathname()).toBe('/accounts/confirm-email/');
      expect(await person.heading()).toBe('Verify your email address');
      await expectMessage(person, `We have sent an email to ${ada.email} for verification.`);
      expect(await person.text()).toContain('We have sent an email to verify your address.');

      const mail = await waitForEmail(site.smtp, { to: ada.email, subject: CONFIRM_SUBJECT });
      const confirmLink = linkFromEmail(mail, '/accounts/confirm-email/');
      expect(new URL(confirmLink).origin).toBe(site.url);

      // Not signed in after signup, and the login is refused with the verification page.
      expect(await person.homeStatus('home-not-signed-in')).toContain('You are not signed in.');
      await person.signIn(ada.username, ada.password, { shot: 'login-before-verifying' });
      expect(await person.heading()).toBe('Verify your email address');
      expect(await person.text()).toContain('Follow the link in it to finish; then sign in.');
      expect(await person.homeStatus('home-still-not-signed-in')).toContain('You are not signed in.');

      // The link: a GET shows what it confirms and changes nothing; the button confirms.
      const shown = await person.visit(confirmLink, 'confirm-page');
      expect(shown.status()).toBe(200);
      expect(await person.heading()).toBe('Confirm email address');
      expect(await person.text()).toContain(`Please confirm that ${ada.email} is an email address for the account ${ada.username}.`);
      await person.visit(confirmLink, 'confirm-page-again');
      expect(await person.text()).toContain(`Please confirm that ${ada.email}`);
      await person.press('Confirm', 'confirmed');
      // This browser's login stopped for this verification, but ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION
      // is off (allauth's default), so confirming only verifies: the person signs in next, now
      // past the verification stage. A login lands on the person's own page
      // (LOGIN_REDIRECT_URL is /users/~redirect/).
      expect(person.pathname()).toBe('/accounts/login/');
      await person.signIn(ada.username, ada.password, { shot: 'login-after-verifying' });
      expect(person.pathname()).toBe(`/users/${ada.username}/`);
      expect(await person.heading()).toBe(ada.username);

      // The link works once.
      const used = await person.visit(confirmLink, 'confirm-link-used');
      expect(used.status()).toBe(404);
      expect(await person.text()).toContain('This email confirmation link is invalid or has expired.');
      await person.close();
    }, JOURNEY_TIMEOUT_MS);

    it('a signup with an address that has an account gets the same page, and the owner is told by email', async () => {
      await ownerCreated;
      const newcomer = await Person.open(browser, site, 'newcomer');
      await newcomer.signUp(newAccount('newcomer'));
      const newcomerSees = (await newcomer.text()).replace(/\S+@example\.com/, 'ADDRESS');
      await newcomer.close();

      const stranger = await Person.open(browser, site, 'stranger');
      await stranger.signUp({ ...newAccount('stranger'), email: owner.email });
      expect(stranger.pathname()).toBe('/accounts/confirm-email/');
      expect((await stranger.text()).replace(owner.email, 'ADDRESS')).toBe(newcomerSees);
      const notice = await waitForEmail(site.smtp, { to: owner.email, subject: 'Account already exists' });
      expect(notice.text).toContain(site.url);
      // Nothing else: no confirmation mail, which would let the newcomer take over the address.
      expect(emailsTo(site.smtp, { to: owner.email, subject: CONFIRM_SUBJECT })).toHaveLength(0);
      await stranger.close();
    }, JOURNEY_TIMEOUT_MS);

    it('a signup with a bad form shows the errors next to the fields and keeps what was typed', async () => {
      const bob = newAccount('bob');
      const person = await Person.open(browser, site);
      await person.visit('/accounts/signup/', 'signup-form');
      await person.fill({ email: bob.email, username: bob.username, password1: bob.password, password2: `${bob.password}x` });
      const refused = await person.press('Sign up', 'passwords-differ');
      expect(refused.status()).toBe(400);
      expect(await person.formErrors()).toEqual(['You must type the same password each time.']);
      expect(await person.page.locator('#id_email').inputValue()).toBe(bob.email);
      expect(await person.page.locator('#id_username').inputValue()).toBe(bob.username);
      expect(await person.page.locator('#id_password2').getAttribute('aria-invalid')).toBe('true');
      expect(emailsTo(site.smtp, { to: bob.email, subject: CONFIRM_SUBJECT })).toHaveLength(0);
      await person.close();
    }, JOURNEY_TIMEOUT_MS);
  });

  describe('under optional verification', () => {
    let site: RunningSite;
    beforeAll(() => {
      site = optional;
    });

    it('signs up and is signed in at once; the mail still arrives and its link verifies the address', async () => {
      const cleo = newAccount('cleo');
      const person = await Person.open(browser, site);
      await person.signUp(cleo);
      // A login lands on the person's own page (LOGIN_REDIRECT_URL is /users/~redirect/).
      expect(person.pathname()).toBe(`/users/${cleo.username}/`);
      expect(await person.heading()).toBe(cleo.username);

      const mail = await waitForEmail(site.smtp, { to: cleo.email, subject: CONFIRM_SUBJECT });
      expect(mail.html).toBeTruthy();

      // The email page shows the address as unverified until the link is followed.
      await person.visit('/accounts/email/', 'email-page-unverified');
      expect(await person.text()).toMatch(new RegExp(`${cleo.email}\\s*Unverified, primary`));

      await person.visit(linkFromEmail(mail, '/accounts/confirm-email/'), 'confirm-page');
      await person.press('Confirm', 'confirmed');
      // Signed in, the confirmation leads back to the email page.
      expect(person.pathname()).toBe('/accounts/email/');
      await expectMessage(person, `You have confirmed ${cleo.email}.`);
      expect(await person.text()).toMatch(new RegExp(`${cleo.email}\\s*Verified, primary`));
      await person.close();
    }, JOURNEY_TIMEOUT_MS);

    it('says so when the address already has an account', async () => {
      const first = newAccount('dora');
      const person = await Person.open(browser, site);
      await person.signUp(first, 'first-signup');
      expect(person.pathname()).toBe(`/users/${first.username}/`);
      await person.close();

      const other = await Person.open(browser, site, 'other');
      const refused = await other.signUp({ ...newAccount('eve'), email: first.email }, 'same-address');
      expect(refused.status()).toBe(400);
      expect(await other.formErrors()).toEqual(['A user is already registered with this email address.']);
      await other.close();
    }, JOURNEY_TIMEOUT_MS);
  });
});
