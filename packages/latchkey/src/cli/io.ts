import { createInterface } from 'node:readline';
import { Writable, type Readable } from 'node:stream';

/** What a command reads and writes, injected so that tests drive commands without a terminal. */
export interface CommandIO {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/** An error a command reports as one line ("Error: ...") with exit status 1, as Django's CommandError. */
export class CommandError extends Error {}

/** Reads answers line by line; on a terminal, password answers are not echoed. */
export class Prompter {
  private readonly lines: AsyncIterator<string>;
  private muted = false;

  constructor(private readonly io: CommandIO) {
    // readline echoes what is typed through `output`; muting it hides a password being typed.
    const output = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        if (!this.muted) io.stdout.write(chunk);
        callback();
      },
    });
    const terminal = io.stdin.isTTY === true;
    this.lines = createInterface({ input: io.stdin, output, terminal })[Symbol.asyncIterator]();
  }

  async ask(question: string, options: { secret?: boolean } = {}): Promise<string> {
    // Mute before asking: an answer may arrive as soon as the question is out.
    this.muted = options.secret === true;
    this.io.stdout.write(question);
    try {
      const next = await this.lines.next();
      if (next.done) throw new CommandError('Input ended before every question was answered.');
      return next.value;
    } finally {
      if (this.muted) this.io.stdout.write('\n');
      this.muted = false;
    }
  }

  close(): void {
    void this.lines.return?.();
  }
}
