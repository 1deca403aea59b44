import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTestsEnabled, expectNoConsoleErrors, launchBrowser, newPage, screenshot, startSite, type RunningSite } from './harness.js';

describe.runIf(browserTestsEnabled())('the example site in Chromium', () => {
  let site: RunningSite | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    // Started together; if one fails, afterAll still stops the other.
    const [startedSite, launched] = await Promise.allSettled([startSite(), launchBrowser()]);
    if (startedSite.status === 'fulfilled') site = startedSite.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    if (startedSite.status === 'rejected') throw startedSite.reason;
    if (launched.status === 'rejected') throw launched.reason;
  }, 60_000);

  afterAll(async () => {
    await Promise.all([browser?.close(), site?.stop()]);
  }, 60_000);

  it('serves the home page with the site name, without console errors', async () => {
    const page: Page = await newPage(browser!, { baseURL: site!.url });
    const response = await page.goto('/');
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe('Home · My Awesome Project');
    expect(await page.locator('h1').textContent()).toBe('My Awesome Project');
    expect(await page.locator('main').textContent()).toContain('You are not signed in.');
    await screenshot(page, 'home');
    expectNoConsoleErrors(page);
  }, 60_000);
});
