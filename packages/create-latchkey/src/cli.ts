import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { freshRandomValues, isUsableTarget, renderProject, writeProject, type RandomValues } from './generate.js';
import { checkedRegistryVersion, LIBRARY_PACKAGE, libraryReference } from './library.js';
import { OptionError, optionsFrom, QUESTIONS, withDefaults, type ProjectOptions } from './options.js';
import { TemplateError } from './render.js';

export const USAGE = `Usage: create-latchkey <directory> [options]

Options (each asked on a terminal when not given; --yes or no terminal takes the defaults):
${QUESTIONS.map((question) => `  ${question.flag} <${question.allowed ?? 'text'}>`).join('\n')}
  --latchkey-version <version>
                     install ${LIBRARY_PACKAGE} from the registry at this version (once it is
                     published there) instead of the copy of it written into vendor/
  --yes, -y          ask nothing, use the defaults for what is not given
  --help, -h         show this help`;

/** What the command line asked for: the target, the answers given as flags, and whether to ask the rest. */
export interface Invocation {
  directory: string;
  answers: Record<string, string>;
  /** --latchkey-version: the library from the registry instead of a vendored copy. */
  latchkeyVersion?: string;
  assumeDefaults: boolean;
  help: boolean;
}

/** The generator's own options that take a value, beside the project's questions. */
const LATCHKEY_VERSION_FLAG = '--latchkey-version';

export function parseArguments(argv: readonly string[]): Invocation {
  const answers: Record<string, string> = {};
  let latchkeyVersion: string | undefined;
  const positional: string[] = [];
  let assumeDefaults = false;
  let help = false;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index]!;
    if (argument === '--yes' || argument === '-y') {
      assumeDefaults = true;
      continue;
    }
    if (argument === '--help' || argument === '-h') {
      help = true;
      continue;
    }
    if (!argument.startsWith('-')) {
      positional.push(argument);
      continue;
    }
    const [flag, inlineValue] = argument.includes('=') ? [argument.slice(0, argument.indexOf('=')), argument.slice(argument.indexOf('=') + 1)] : [argument, undefined];
    const question = QUESTIONS.find((candidate) => candidate.flag === flag);
    if (!question && flag !== LATCHKEY_VERSION_FLAG) {
      throw new OptionError(`unknown option ${flag}; allowed: ${QUESTIONS.map((candidate) => candidate.flag).join(', ')}, ${LATCHKEY_VERSION_FLAG}, --yes, --help.`);
    }
    const value = inlineValue ?? argv[index + 1];
    if (value === undefined) throw new OptionError(`${flag} needs a value (${question ? (question.allowed ?? 'text') : 'a version'}).`);
    if (inlineValue === undefined) index += 1;
    if (question) answers[question.name] = value;
    else latchkeyVersion = checkedRegistryVersion(value.trim());
  }
  const given = { answers, latchkeyVersion, assumeDefaults, help };
  if (help) return { directory: '', ...given };
  if (positional.length !== 1) throw new OptionError(`give exactly one target directory (got ${positional.length}); see --help.`);
  return { directory: positional[0]!, ...given };
}

/** Asks each question not answered by a flag, showing its default; an empty answer takes it. */
async function askRemaining(given: Readonly<Record<string, string>>, input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<Record<string, string>> {
  const answers = { ...given };
  const prompt = createInterface({ input, output });
  try {
    for (const question of QUESTIONS) {
      if (question.name in answers) continue;
      const fallback = question.defaultFrom(answers);
      const hint = question.allowed ? ` (${question.allowed})` : '';
      const answer = (await prompt.question(`${question.name}${hint} [${fallback}]: `)).trim();
      answers[question.name] = answer === '' ? fallback : answer;
    }
  } finally {
    prompt.close();
  }
  return answers;
}

export function nextSteps(directory: string, options: ProjectOptions, vendored: boolean): string {
  return [
    `Created ${options.projectName} in ${directory}`,
    ...(vendored ? [`${LIBRARY_PACKAGE} is in its vendor/ directory, until it is published: keep vendor/ with the project.`] : []),
    '',
    'Next steps:',
    `  cd ${directory}`,
    '  npm install',
    '  npm run dev                          # http://localhost:8000 on SQLite; emails go to the console',
    '  npm run manage -- createsuperuser',
    '  npm test',
    '',
    'README.md says how to configure production and add social sign-in providers.',
    '',
  ].join('\n');
}

export interface GeneratorIo {
  /** Where relative target directories are resolved from (npm sets INIT_CWD to where it was run). */
  cwd: string;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  random?: RandomValues;
}

/** The generator's command line; returns the exit status. Every refusal is one line, and writes nothing. */
export async function runGenerator(argv: readonly string[], io: GeneratorIo): Promise<number> {
  try {
    const invocation = parseArguments(argv);
    if (invocation.help) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const target = resolve(io.cwd, invocation.directory);
    if (!isUsableTarget(target)) throw new OptionError(`${invocation.directory} exists and is not an empty directory; choose a new or empty one.`);
    const interactive = io.stdin.isTTY === true && !invocation.assumeDefaults;
    const answers = interactive ? await askRemaining(invocation.answers, io.stdin, io.stdout) : withDefaults(invocation.answers);
    const options = optionsFrom(answers);
    const library = libraryReference(target, invocation.latchkeyVersion);
    const files = new Map<string, string | Uint8Array>(renderProject(options, io.random ?? freshRandomValues(), library.dependency));
    for (const [path, content] of library.files) files.set(path, content);
    writeProject(target, files);
    io.stdout.write(nextSteps(invocation.directory, options, library.files.size > 0));
    return 0;
  } catch (error) {
    if (error instanceof OptionError || error instanceof TemplateError) {
      io.stderr.write(`Error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
