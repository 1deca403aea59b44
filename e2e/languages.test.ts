/**
 * Every page a person and a staff member reach, in each language Latchkey ships besides English
 * (which every other journey walks), in
 * Chromium on a phone-sized screen (docs/translations.md). For each language a person whose
 * browser asks for it signs up, confirms their address from the mail (in their language), signs in,
 * asks for a sign-in code and a password reset, and opens their account's pages (addresses,
 * password, sessions, two-factor authentication, the authenticator app, recovery codes, security
 * keys, connected accounts, reauthentication, their profile); a staff member opens the admin and
 * each of its lists. Every page must have the language's `lang` and `dir`, no English left in what
 * it says, and nothing wider than the screen (a long German
 * word, Arabic's right-to-left layout). Each page is screenshotted in the e2e artifacts.
 *
 * It runs once, on SQLite: the pages are rendered the same on PostgreSQL, where the suites in
 * packages/latchkey/src test them without a browser.
 */
import { readFileSync } from 'node:fs';
import { po } from 'gettext-parser';
import { describe, expect, it } from 'vitest';
import { LATCHKEY_LOCALE_DIR, loadCatalogs } from '../packages/latchkey/src/core/i18n/catalogs.js';
import { SHIPPED_LANGUAGES } from '../packages/latchkey/src/core/i18n/languages.js';
import { browserTestsEnabled, linkFromEmail } from './harness.js';
import { useSuperuser } from './admin-journey.js';
import { JOURNEY_TIMEOUT_MS, PASSWORD, Person, newAccount, useSiteAndBrowser, waitForEmail } from './journey.js';

const catalogs = loadCatalogs({ languages: SHIPPED_LANGUAGES });
const english = loadCatalogs({ languages: ['en'] }).translator('en');
/** Every English message of Latchkey's, from its catalog template. */
const ENGLISH_IDS = Object.values(po.parse(readFileSync(`${LATCHKEY_LOCALE_DIR}/latchkey.pot`)).translations).flatMap((byId) => Object.keys(byId)).filter((id) => id !== '');

/** The browser locale that asks for each language. */
const LOCALES: Record<(typeof SHIPPED_LANGUAGES)[number], string> = { en: 'en-US', fr: 'fr-FR', de: 'de-DE', es: 'es-ES', 'pt-br': 'pt-BR', ja: 'ja-JP', ar: 'ar-EG' };

/**
 * English that must not be left on a page in `language`: the catalogs' English texts that the
 * language translates, cut at their placeholders into the runs of two words or more that a
 * person would read as English. (Single words, which other languages borrow, are left to the
 * catalogs' completeness test.)
 */
function englishLeftovers(language: string): string[] {
  const translator = catalogs.translator(language);
  const ids = ENGLISH_IDS.filter((id) => translator.gettext(id) !== id);
  return [...new Set(ids.flatMap((id) => id.split(/\{\w+\}/).map((part) => part.trim())).filter((part) => /^\S+\s+\S+/.test(part) && /[a-z]{3}/i.test(part)))];
}

/** English's small words, which no other shipped language uses. */
const ENGLISH_WORDS = /\b(?:the|your|you|with|this|and|Sign in|Sign out|Sign up)\b/;

describe.runIf(browserTestsEnabled())('every page in the seven languages', () => {
  const journey = useSiteAndBrowser({ env: { LATCHKEY_ACCOUNT_EMAIL_VERIFICATION: 'mandatory' } });
  const keeper = useSuperuser(journey);

  // English is every other journey's language, on the same pages: the walk is for the six others.
  it.each(SHIPPED_LANGUAGES.filter((language) => language !== 'en'))('in %s', async (language) => {
    const tr = catalogs.translator(language);
    const leftovers = englishLeftovers(language);
    const person = await Person.open(journey.browser, journey.site, language, { locale: LOCALES[language], viewport: { width: 390, height: 844 } });

    /** The page as this language's reader sees it: lang, dir, no English, nothing wider than the screen. */
    async function check(what: string): Promise<void> {
      const page = person.page;
      expect(await page.locator('html').getAttribute('lang'), what).toBe(language);
      expect(await page.locator('html').getAttribute('dir'), what).toBe(language === 'ar' ? 'rtl' : 'ltr');
      const text = await page.locator('body').innerText();
      expect(leftovers.filter((part) => text.includes(part)), `English on ${what} (${page.url()})`).toEqual([]);
      expect(ENGLISH_WORDS.exec(text.replace(/\S+@\S+/g, ''))?.[0], `English on ${what}`).toBeUndefined();
      // Right to left, the header starts at the right: the site's name is there, not at the left.
      const brand = await page.locator('.lk-brand').boundingBox();
      if (brand) expect(language === 'ar' ? brand.x + brand.width > 195 : brand.x < 195, `${what}: the site's name starts the header`).toBe(true);
      // Written as a string: this file is compiled without the DOM's types.
      const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));
      expect(overflow, `${what} is wider than the screen`).toBeLessThanOrEqual(1);
    }
    async function visit(path: string, what: string): Promise<void> {
      await person.visit(path, what);
      await check(what);
    }
    async function press(button: string, what: string): Promise<void> {
      await person.press(tr.gettext(button), what);
      await check(what);
    }

    // A stranger: the pages before an account.
    await visit('/accounts/login/', 'login');
    await visit('/accounts/login/code/', 'login-code');
    await visit('/accounts/password/reset/', 'password-reset');
    await visit('/accounts/no-such-page/', 'not-found');

    // Signing up, and the confirmation mail in the person's language.
    const account = newAccount(`l${language.replace('-', '')}`);
    await visit('/accounts/signup/', 'signup');
    await person.fill({ email: account.email, username: account.username, password1: account.password, password2: account.password });
    await press('Sign up', 'verification-sent');
    const confirmSubject = tr.gettext('Please confirm your email address');
    expect(confirmSubject).not.toBe(english.gettext('Please confirm your email address'));
    const confirmation = await waitForEmail(journey.site.smtp, { to: account.email, subject: confirmSubject });
    await visit(linkFromEmail(confirmation, '/accounts/confirm-email/'), 'confirm-email');
    // Confirmed, the person signs in themselves (ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION is off).
    await press('Confirm', 'email-confirmed');
    expect(person.pathname()).toBe('/accounts/login/');
    await person.fill({ login: account.username, password: PASSWORD });
    await press('Sign in', 'signed-in');
    expect(person.pathname()).toBe(`/users/${account.username}/`);

    // Signed in: every page of the account.
    for (const [path, what] of [
      ['/accounts/email/', 'email'],
      ['/accounts/password/change/', 'password-change'],
      ['/accounts/sessions/', 'sessions'],
      ['/accounts/2fa/', 'two-factor'],
      ['/accounts/2fa/totp/activate/', 'authenticator-app'],
      ['/accounts/2fa/webauthn/', 'security-keys'],
      ['/accounts/2fa/webauthn/add/', 'add-security-key'],
      ['/accounts/3rdparty/', 'connected-accounts'],
      ['/accounts/reauthenticate/', 'reauthenticate'],
      ['/users/~update/', 'profile'],
      ['/accounts/logout/', 'sign-out'],
    ] as const) {
      await visit(path, what);
    }
    await press('Sign out', 'signed-out');

    // A sign-in code and a password reset, each mailed in the person's language.
    await visit('/accounts/login/code/', 'request-code');
    await person.fill({ email: account.email });
    await press('Mail me a code', 'confirm-code');
    await visit('/accounts/password/reset/', 'reset-request');
    await person.fill({ email: account.email });
    await press('Reset my password', 'reset-sent');
    const reset = await waitForEmail(journey.site.smtp, { to: account.email, subject: tr.gettext('Password reset') });
    await visit(linkFromEmail(reset, '/accounts/password/reset/key/'), 'reset-from-key');
    await person.close();

    // A staff member whose browser asks for the language: the admin's index and each of its lists.
    const staff = await Person.open(journey.browser, journey.site, `${language}-staff`, { locale: LOCALES[language], viewport: { width: 390, height: 844 } });
    await staff.visit('/admin/', 'admin-login');
    await staff.fill({ username: keeper, password: PASSWORD });
    await staff.press(tr.gettext('Log in'), 'admin-index');
    const lists = (await Promise.all((await staff.page.locator('main table a').all()).map((link) => link.getAttribute('href')))).filter((href): href is string => href !== null);
    expect(lists.length).toBeGreaterThan(5);
    for (const path of [...new Set(lists)]) {
      await staff.visit(path, `admin-${path.split('/').filter(Boolean).slice(-2).join('-')}`);
      expect(await staff.page.locator('html').getAttribute('lang')).toBe(language);
      const text = await staff.page.locator('body').innerText();
      expect(leftovers.filter((part) => text.includes(part)), `English on ${path}`).toEqual([]);
    }
    await staff.close();
  }, JOURNEY_TIMEOUT_MS * 2);
});
