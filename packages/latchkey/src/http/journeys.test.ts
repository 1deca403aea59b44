import { describe, expect, it } from 'vitest';
import { testDatabaseKinds, type TestDatabaseKind } from '../testing/database.js';
import { openHeadlessDriver } from '../testing/journeys/headless-driver.js';
import { openPagesDriver } from '../testing/journeys/pages-driver.js';
import { openTokenDriver } from '../testing/journeys/token-driver.js';
import type { Door, DriverFactory, JourneyDriver } from '../testing/journeys/driver.js';
import { doorsOf, expectedThrough, SCENARIOS, type Scenario, type ScenarioContext } from '../testing/journeys/scenarios.js';
import { createTestLatchkey } from '../testing/latchkey.js';

/** Every front door of an account: the pages, the headless API's two clients, and the token API. */
const DRIVERS: Record<Door, DriverFactory> = {
  pages: openPagesDriver,
  'headless browser': (latchkey) => openHeadlessDriver(latchkey, 'browser'),
  'headless app': (latchkey) => openHeadlessDriver(latchkey, 'app'),
  'token api': openTokenDriver,
};

type Journal = [does: string, outcome: unknown][];

/**
 * One scenario through one door, on a site of its own: what each step gave. A step that fails
 * outright (an answer the driver cannot read) ends the journey with its message in the journal,
 * so that the comparison shows where each door went its own way.
 */
async function journey(kind: TestDatabaseKind, scenario: Scenario, open: DriverFactory): Promise<Journal> {
  const latchkey = await createTestLatchkey({ kind, ...(scenario.settings ? { settings: scenario.settings } : {}) });
  const journal: Journal = [];
  try {
    const given = scenario.given ? await scenario.given(latchkey) : { users: {} };
    const opened = await open(latchkey);
    const devices = new Map<string, JourneyDriver>();
    const context: ScenarioContext = {
      latchkey,
      driver: opened.driver,
      given,
      device(name, options) {
        let device = devices.get(name);
        if (!device) {
          device = opened.driver.another(options);
          devices.set(name, device);
        }
        return device;
      },
    };
    try {
      for (const step of scenario.steps) {
        try {
          journal.push([step.does, await step.run(context)]);
        } catch (error) {
          journal.push([step.does, `failed: ${error instanceof Error ? error.message : String(error)}`]);
          break;
        }
      }
    } finally {
      await opened.close();
    }
  } finally {
    await latchkey.destroy();
  }
  return journal;
}

describe.each(testDatabaseKinds())('account journeys through the pages, the headless API’s two clients and the token API on %s', (kind) => {
  it.each(SCENARIOS.map((scenario) => [scenario.name, scenario] as const))('%s', async (_name, scenario) => {
    // The doors the scenario leaves out name their reason in it (notThrough); a scenario no door takes would prove nothing.
    const doors = doorsOf(scenario);
    expect(doors).not.toEqual([]);
    const journals: Partial<Record<Door, Journal>> = {};
    const expected: Partial<Record<Door, Journal>> = {};
    for (const door of doors) {
      journals[door] = await journey(kind, scenario, DRIVERS[door]);
      expected[door] = scenario.steps.map((step) => [step.does, expectedThrough(step, door)]);
    }
    // Every door gives the outcomes the scenario declares (or, where a step says so, its own by
    // design), and so the same ones as each other.
    expect(journals).toEqual(expected);
  });
});
