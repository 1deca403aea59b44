/**
 * Stops a flow at a chosen point and keeps it there, for a test that kills the process at that
 * very moment (flow-crash.child.ts): after the first row the flow writes, or right after its
 * first transaction commits. Waiting for a kill signal at a random instant would mostly land
 * before or after the change; a gate lands inside it every time.
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Repositories, Store } from '../store.js';

export type PausePoint = 'after-first-write' | 'after-first-commit';

/** Where the flow stood when it stopped, or 'completed' if it never reached the point. */
export type PauseOutcome = 'inside-transaction' | 'outside-transaction' | 'after-commit' | 'completed';

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);

export class PauseGate {
  /** Resolves with where the flow stopped, once it has. */
  readonly reached: Promise<PauseOutcome>;
  private reach: (outcome: PauseOutcome) => void = () => undefined;
  private armed = false;
  private openTransactions = 0;
  private readonly writes = new WeakSet<object>();

  constructor(private readonly point: PausePoint) {
    this.reached = new Promise((resolve) => (this.reach = resolve));
  }

  /** From now on, the next write or commit (per the point) stops the flow. Setting up goes first, unstopped. */
  arm(): void {
    this.armed = true;
  }

  /** Sees every statement of the store it is given to (Kysely's withPlugin). */
  readonly plugin: KyselyPlugin = {
    transformQuery: (args: PluginTransformQueryArgs): RootOperationNode => {
      if (WRITES.has(args.node.kind)) this.writes.add(args.queryId);
      return args.node;
    },
    transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => {
      if (this.armed && this.point === 'after-first-write' && this.writes.has(args.queryId)) {
        await this.stop(this.openTransactions > 0 ? 'inside-transaction' : 'outside-transaction');
      }
      return args.result;
    },
  };

  /** The store with its transactions counted (to say where a write was) and, per the point, stopped after the commit. */
  wrap(store: Store): Store {
    return {
      ...store,
      transaction: async <T>(work: (repositories: Repositories) => Promise<T>): Promise<T> => {
        this.openTransactions += 1;
        let result: T;
        try {
          result = await store.transaction(work);
        } finally {
          this.openTransactions -= 1;
        }
        if (this.armed && this.point === 'after-first-commit') await this.stop('after-commit');
        return result;
      },
    };
  }

  /** Never returns: the flow waits here until the process is killed. */
  private stop(outcome: PauseOutcome): Promise<never> {
    this.armed = false;
    this.reach(outcome);
    return new Promise<never>(() => undefined);
  }
}
