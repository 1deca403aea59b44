/**
 * Time comes from a Clock so that tests can move it (expiry of sessions, keys and codes) without
 * sleeping and without depending on the wall clock.
 */
export interface Clock {
  now(): Date;
}

/** The real clock: the current time. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until a test moves it. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string = '2030-01-01T00:00:00.000Z') {
    this.current = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(milliseconds: number): void {
    this.current += milliseconds;
  }

  set(at: Date | string): void {
    this.current = new Date(at).getTime();
  }
}
