// `manage changepassword <login>`, as Django's: sets a user's password from a terminal, for an
// operator helping someone locked out.
import { LOGIN_ARGUMENT, runFrom, type Command } from '../declaration.js';

export const changepassword: Command = {
  summary: "set a user's password and end their sessions",
  description:
    "Asks twice for the user's new password (not shown while typed, or read from piped input), checks it with the password validators, sets it and ends every session of the user.",
  arguments: [LOGIN_ARGUMENT],
  run: runFrom(() => import('./changepassword.run.js')),
};
