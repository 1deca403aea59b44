// `manage clearsessions`, as Django's: expired sessions stay in the store until removed, so a
// deployment runs this daily. It also removes what else the database keeps past its use.
import { runFrom, type Command } from '../declaration.js';
import { ABANDONED_MAIL_KEPT_DAYS } from './shared-names.js';

export const clearsessions: Command = {
  summary: 'remove expired sessions, counters and claims (run it daily)',
  description: `Removes the sessions past their idle or absolute limit, the expired rate-limit counters and one-time-code claims kept in the database, and the mails the outbox gave up on over ${ABANDONED_MAIL_KEPT_DAYS} days ago, then says how many of each. Run it daily from cron or your scheduler.`,
  run: runFrom(() => import('./clearsessions.run.js')),
};
