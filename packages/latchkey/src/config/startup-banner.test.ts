import { describe, expect, it } from 'vitest';
import { testSettings } from '../testing/latchkey.js';
import { startupBanner } from './startup-banner.js';

describe('startupBanner', () => {
  it('says where the site, the admin, the mail and the database are, in one block', () => {
    const banner = startupBanner({ ...testSettings(), SITE_NAME: 'Acme', ENVIRONMENT: 'local', SITE_URL: 'http://localhost:19080', EMAIL_URL: 'console:', DATABASE_URL: 'sqlite:./db.sqlite3' });
    expect(banner).toBe(
      [
        'Acme (local mode)',
        '  site     http://localhost:19080/',
        '  admin    http://localhost:19080/admin/',
        '  mail     printed in this console (EMAIL_URL=console:)',
        '  database sqlite:./db.sqlite3',
        '',
      ].join('\n'),
    );
  });

  it('follows URL_PREFIX and ADMIN_URL, and shows no password', () => {
    const banner = startupBanner({
      ...testSettings(),
      ENVIRONMENT: 'local',
      SITE_URL: 'http://localhost:8000',
      URL_PREFIX: '/auth',
      ADMIN_URL: 'staff/',
      EMAIL_URL: 'smtp://mailer:hunter2@127.0.0.1:1025',
      DATABASE_URL: 'postgres://app:hunter2@127.0.0.1:5432/app',
    });
    expect(banner).toContain('  site     http://localhost:8000/auth/');
    expect(banner).toContain('  admin    http://localhost:8000/auth/staff/');
    expect(banner).toContain('  mail     sent through smtp://127.0.0.1:1025');
    expect(banner).not.toContain('hunter2');
  });
});
