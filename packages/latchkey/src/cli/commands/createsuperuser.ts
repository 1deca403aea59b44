// `manage createsuperuser`, as Django's: creates a staff superuser, asking at a terminal or, with
// --noinput, taking the password from LATCHKEY_SUPERUSER_PASSWORD (for scripted deployments).
import { runFrom, type Command } from '../declaration.js';
import { SUPERUSER_PASSWORD_VARIABLE } from './shared-names.js';

export const createsuperuser: Command = {
  summary: 'create a staff superuser',
  description:
    'Creates a user with staff and superuser rights. At a terminal it asks for what is not given, and for the password twice (not shown while typed); without one, give --noinput. The email address is stored as verified: the operator vouches for it.',
  options: {
    username: { type: 'string', value: 'U', help: 'the username (asked for at a terminal if not given; required with --noinput; refused where people log in by email)' },
    email: { type: 'string', value: 'E', help: 'the email address (asked for at a terminal if not given; required with --noinput where people log in by email)' },
    noinput: { type: 'boolean', help: `ask nothing: the password comes from ${SUPERUSER_PASSWORD_VARIABLE}, for scripts and deployments` },
  },
  environment: { [SUPERUSER_PASSWORD_VARIABLE]: 'the password, with --noinput' },
  run: runFrom(() => import('./createsuperuser.run.js')),
};
