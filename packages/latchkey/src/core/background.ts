/**
 * Work that must not hold up the answer to a request, such as mail whose sending would reveal by
 * its timing whether an account exists. Every task is tracked so that shutdown, and tests, can
 * wait for all of it.
 *
 * A task starts after the current work has yielded (setImmediate). That is not enough for a door
 * that still waits for something after the flow (a session written to the database, say): the
 * task would run its lookups, templates and mail during that wait and delay the answer for an
 * existing account only. Such a door hands the flow `afterAnswer(sent)`, the same tasks' tracker
 * whose tasks wait until the answer has been sent (http/kit/after-answer.ts; docs/architecture.md,
 * "Work after the answer"). It is given per call, not kept per request in async context: on
 * Node 20 that would slow every promise of every request, the token API's included.
 */
export class BackgroundTasks {
  constructor(
    /** What a task waits for before it starts: the answer's being sent, or (undefined) the next turn. */
    private readonly startsAfter?: Promise<void>,
    private readonly pending = new Set<Promise<unknown>>(),
  ) {}

  /** Starts `task` once the answer has been sent (afterAnswer), or else once the current work has yielded. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const start = this.startsAfter ?? new Promise<void>((resolve) => setImmediate(resolve));
    const running = start.then(task, task);
    const tracked = running.finally(() => this.pending.delete(tracked));
    // The caller decides what a failure means; tracking must not turn it into an unhandled rejection.
    tracked.catch(() => undefined);
    this.pending.add(tracked);
    return running;
  }

  /**
   * These tasks as a flow called by a door sees them: each starts once `answerSent` settles (it
   * must settle whatever happens to the request, a client that went away included), and idle()
   * waits for them with all the others.
   */
  afterAnswer(answerSent: Promise<void>): BackgroundTasks {
    return new BackgroundTasks(answerSent, this.pending);
  }

  /** Resolves once every task started so far, and any task they started, has settled. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
