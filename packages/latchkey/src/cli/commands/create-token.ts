// `manage create-token [--reset] <login>`, as Django REST framework's drf_create_token: hands an
// operator a user's API token key without going through the HTTP API.
import { LOGIN_ARGUMENT, runFrom, type Command } from '../declaration.js';

export const createToken: Command = {
  summary: "print a user's API token, creating it if they have none",
  description:
    "Prints the user's API token key (for `Authorization: Token <key>`), creating the token if they have none: the same key on every run, and the one POST /api/auth-token/ answers. Only the key goes to standard output, so that a script can capture it.",
  arguments: [LOGIN_ARGUMENT],
  options: {
    reset: { type: 'boolean', help: 'delete the token first and print a new key: the old key stops working at once (for a key that has leaked)' },
  },
  run: runFrom(() => import('./create-token.run.js')),
};
