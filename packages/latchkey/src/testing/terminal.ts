import { PassThrough } from 'node:stream';
import type { ProjectSettings } from '../config/load.js';
import { runManagementCommand, type ManagementOptions } from '../cli/index.js';

export interface TerminalSession {
  /** The project directory the command runs in. */
  cwd: string;
  env: Record<string, string>;
  /** What the person types, one answer per prompt (a prompt ends in ": "). */
  answers?: string[];
  /** Whether standard input is a terminal (secrets are then asked for without echo). */
  tty?: boolean;
  /** What the project's manage script passes besides its settings (its own provider kinds). */
  options?: ManagementOptions;
}

/**
 * Runs a management command as a person at a terminal would: each answer is typed only once its
 * question has been asked, and input ends when the answers run out.
 */
export async function runAsPerson(argv: string[], project: ProjectSettings, session: TerminalSession): Promise<{ code: number; out: string; err: string }> {
  const stdin = Object.assign(new PassThrough(), { isTTY: session.tty ?? false });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  const answers = [...(session.answers ?? [])];
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (/: $/.test(chunk.toString())) {
      const answer = answers.shift();
      if (answer === undefined) stdin.end();
      else stdin.write(`${answer}\n`);
    }
  });
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await runManagementCommand(argv, project, { stdin, stdout, stderr, cwd: session.cwd, env: session.env }, session.options);
  return { code, out, err };
}
