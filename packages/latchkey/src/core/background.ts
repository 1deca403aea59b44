/**
 * Work that must not hold up the answer to a request, such as mail whose sending would reveal by
 * its timing whether an account exists. A task starts after the current request's work has
 * yielded (setImmediate), and is tracked so that shutdown, and tests, can wait for all of it.
 */
export class BackgroundTasks {
  private readonly pending = new Set<Promise<unknown>>();

  run<T>(task: () => Promise<T>): Promise<T> {
    const running = new Promise<void>((resolve) => setImmediate(resolve)).then(task);
    const tracked = running.finally(() => this.pending.delete(tracked));
    // The caller decides what a failure means; tracking must not turn it into an unhandled rejection.
    tracked.catch(() => undefined);
    this.pending.add(tracked);
    return running;
  }

  /** Resolves once every task started so far, and any task they started, has settled. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
