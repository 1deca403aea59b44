// `manage delete-token <login>`: revokes a user's API token from the command line. Django REST
// framework has no such command (drf_create_token --reset replaces a key, never just removes it);
// this is the one to run when a key must stop working and no new one is wanted.
import { LOGIN_ARGUMENT, runFrom, type Command } from '../declaration.js';

export const deleteToken: Command = {
  summary: "delete a user's API token",
  description: "Deletes the user's API token: its key is refused at once, by every instance of the server. Says so when the user has none; both answers exit with status 0.",
  arguments: [LOGIN_ARGUMENT],
  run: runFrom(() => import('./delete-token.run.js')),
};
