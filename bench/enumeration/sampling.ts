/**
 * Interleaved sampling: every trial runs each probe once, starting with a different probe each
 * time, so that whatever drifts during the run (another process's load, the CPU's clock, a growing
 * table) falls on every group alike instead of on whichever ran first or last.
 */
export interface Probe {
  label: string;
  /** Runs one attempt and returns the milliseconds of its timed part (setup is left out). */
  run(trial: number): Promise<number>;
}

export interface SamplingOptions {
  trials: number;
  /** Trials run first and thrown away: the JIT, the template cache and SQLite's pages warm up. */
  warmUp: number;
  /** Called after every attempt, outside the timing (see BenchSite.settle). */
  settle(): Promise<void>;
}

/** The times of each probe, by label. */
export async function sampleInterleaved(probes: readonly Probe[], options: SamplingOptions): Promise<Map<string, number[]>> {
  const times = new Map<string, number[]>(probes.map((probe) => [probe.label, []]));
  for (let trial = 0; trial < options.warmUp + options.trials; trial++) {
    for (let index = 0; index < probes.length; index++) {
      const probe = probes[(trial + index) % probes.length]!;
      const ms = await probe.run(trial);
      await options.settle();
      if (trial >= options.warmUp) times.get(probe.label)!.push(ms);
    }
  }
  return times;
}

/** Throws when a response is not the one every group must get: a timing comparison of different answers means nothing. */
export function expectAnswer(what: string, actual: { statusCode: number; headers: Record<string, unknown> }, status: number, location?: string): void {
  const where = actual.headers.location;
  if (actual.statusCode !== status || (location !== undefined && where !== location)) {
    throw new Error(`${what}: expected ${status}${location === undefined ? '' : ` to ${location}`}, got ${actual.statusCode}${typeof where === 'string' ? ` to ${where}` : ''}`);
  }
}
