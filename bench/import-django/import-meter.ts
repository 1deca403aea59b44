/**
 * Where the import's time goes. The import child (import-child.ts) times, per kind, the waits on
 * the source (reads), on Latchkey's database (the SELECTs that find rows already there or values
 * already taken, and the INSERTs: a Kysely plugin times every statement), and the rest
 * (converting rows: JSON, instants, sealing tokens and MFA secrets, the flow's own work).
 */
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { DJANGO_KINDS, type DjangoKind } from '../../packages/latchkey/src/django-import/model.js';
import type { DjangoSource } from '../../packages/latchkey/src/django-import/ports.js';
import { secondsSince } from './figures.js';

/** Seconds spent in one kind: waiting for the source, in Latchkey's SELECTs and INSERTs, and in all (the rest is JavaScript). */
export interface KindTimes {
  seconds: number;
  source: number;
  select: number;
  insert: number;
  otherSql: number;
  batches: number;
}

const emptyTimes = (): KindTimes => ({ seconds: 0, source: 0, select: 0, insert: 0, otherSql: 0, batches: 0 });

/** Where the import's time goes, kind by kind. */
export class Meter {
  readonly times = Object.fromEntries(DJANGO_KINDS.map((kind) => [kind, emptyTimes()])) as Record<DjangoKind, KindTimes>;
  private current: DjangoKind | undefined;
  private enteredAt = 0;
  lastLeft = 0;

  enter(kind: DjangoKind): void {
    this.current = kind;
    this.enteredAt = performance.now();
  }

  leave(): void {
    if (this.current !== undefined) this.times[this.current].seconds += secondsSince(this.enteredAt);
    this.current = undefined;
    this.lastLeft = performance.now();
  }

  add(what: 'source' | 'select' | 'insert' | 'otherSql', milliseconds: number): void {
    if (this.current !== undefined) this.times[this.current][what] += milliseconds / 1000;
  }

  batch(): void {
    if (this.current !== undefined) this.times[this.current].batches++;
  }
}

/** The source, with its reads timed: the import calls count(kind), then reads the kind's batches. */
export function timedSource(inner: DjangoSource, meter: Meter): DjangoSource {
  return {
    description: inner.description,
    loginField: () => inner.loginField(),
    userColumns: () => inner.userColumns(),
    has: (kind) => inner.has(kind),
    async count(kind) {
      meter.enter(kind);
      const started = performance.now();
      const total = await inner.count(kind);
      meter.add('source', performance.now() - started);
      return total;
    },
    rows(kind, batchSize) {
      const batches = inner.rows(kind, batchSize)[Symbol.asyncIterator]();
      return (async function* () {
        for (;;) {
          const started = performance.now();
          const next = await batches.next();
          meter.add('source', performance.now() - started);
          if (next.done === true) {
            meter.leave();
            return;
          }
          meter.batch();
          yield next.value;
        }
      })();
    },
    close: () => inner.close(),
  };
}

/** Times every statement Kysely runs, as a SELECT, an INSERT or another. */
export class StatementTimer implements KyselyPlugin {
  private readonly started = new WeakMap<object, { at: number; what: 'select' | 'insert' | 'otherSql' }>();

  constructor(private readonly meter: Meter) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const what = args.node.kind === 'SelectQueryNode' ? 'select' : args.node.kind === 'InsertQueryNode' ? 'insert' : 'otherSql';
    this.started.set(args.queryId, { at: performance.now(), what });
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const started = this.started.get(args.queryId);
    if (started !== undefined) this.meter.add(started.what, performance.now() - started.at);
    return Promise.resolve(args.result);
  }
}

