import { runGenerator } from './cli.js';

// npm runs scripts from the package's directory and keeps the caller's in INIT_CWD.
const cwd = process.env.INIT_CWD ?? process.cwd();
process.exitCode = await runGenerator(process.argv.slice(2), { cwd, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
