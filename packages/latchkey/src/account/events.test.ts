import { afterEach, describe, expect, it } from 'vitest';
import { createTestLatchkey, type TestLatchkey } from '../testing/latchkey.js';
import { AccountEvents, type AccountEvent } from './events.js';
import { createUser } from './users.js';

describe('account events', () => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  it('reach subscribers of that event and of every event, and are written to the audit trail', async () => {
    latchkey = await createTestLatchkey();
    const user = await createUser(latchkey.deps, { username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    const logins: AccountEvent[] = [];
    const all: string[] = [];
    const unsubscribe = latchkey.deps.events.subscribe('user_logged_in', (event) => {
      logins.push(event);
    });
    latchkey.deps.events.subscribe('*', (event) => {
      all.push(event.name);
    });
    const client = { ip: '203.0.113.9', userAgent: 'Chromium' };
    await latchkey.deps.events.emit('user_logged_in', user.id, client, { method: 'password' });
    await latchkey.deps.events.emit('user_logged_out', user.id, client);
    unsubscribe();
    await latchkey.deps.events.emit('user_logged_in', user.id, client, { method: 'password' });
    expect(logins).toEqual([{ name: 'user_logged_in', userId: user.id, at: latchkey.clock.now(), client, data: { method: 'password' } }]);
    expect(all).toEqual(['user_logged_in', 'user_logged_out', 'user_logged_in']);
    const trail = await latchkey.deps.store.auditLog.listForUser(user.id);
    expect(trail).toHaveLength(3);
    expect(trail[0]).toMatchObject({ event: 'user_logged_in', ipAddress: '203.0.113.9', userAgent: 'Chromium', createdAt: latchkey.clock.now() });
  });

  it('a subscriber that throws does not fail the flow that emitted the event', async () => {
    latchkey = await createTestLatchkey();
    const failures: unknown[] = [];
    const events = new AccountEvents(latchkey.deps.store.auditLog, latchkey.clock, (error) => failures.push(error));
    events.subscribe('user_signed_up', () => {
      throw new Error('subscriber bug');
    });
    await expect(events.emit('user_signed_up', null, { ip: '', userAgent: '' })).resolves.toMatchObject({ name: 'user_signed_up' });
    expect(failures).toHaveLength(1);
  });
});
