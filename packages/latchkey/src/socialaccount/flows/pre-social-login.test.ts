import { afterEach, describe, expect, it } from 'vitest';
import { LatchkeyError } from '../../core/errors.js';
import { testDatabaseKinds } from '../../testing/database.js';
import { createTestLatchkey, type TestLatchkey } from '../../testing/latchkey.js';
import { SocialAccountAdapter, type SocialLoginAttempt, type SocialLoginDecision } from '../adapter.js';
import { askPreSocialLogin } from './pre-social-login.js';

const ATTEMPT: SocialLoginAttempt = { provider: 'dummy', uid: 'ada-1815', data: {}, process: 'login', emails: [{ email: 'ada@example.com', verified: true, primary: true }] };

describe.each(testDatabaseKinds())("preSocialLogin's answer, held to its contract, on %s", (kind) => {
  let latchkey: TestLatchkey;
  afterEach(() => latchkey.destroy());

  async function askWith(answer: (attempt: SocialLoginAttempt) => unknown, attempt: SocialLoginAttempt = ATTEMPT) {
    class Answering extends SocialAccountAdapter {
      override preSocialLogin(given: SocialLoginAttempt): SocialLoginDecision | undefined {
        return answer(given) as SocialLoginDecision | undefined;
      }
    }
    latchkey = await createTestLatchkey({ kind, socialAdapter: (settings) => new Answering(settings) });
    return () => askPreSocialLogin(latchkey.deps, attempt);
  }

  it("takes a LatchkeyError as the project's refusal, anything else as a failure", async () => {
    const refusal = new LatchkeyError('permission_denied', 'Not here.');
    expect(await (await askWith(() => { throw refusal; }))()).toEqual({ kind: 'refused', refusal });
    await latchkey.destroy();
    await expect((await askWith(() => { throw new Error('bug'); }))()).rejects.toThrow('bug');
  });

  it('connects only at a login with a provider account nobody has, and only to a user who exists', async () => {
    const ask = await askWith(() => ({ connectTo: { id: 424242 } }));
    await expect(ask()).rejects.toThrow(/does not exist/);
    const ada = await latchkey.users.create({ username: 'ada', email: 'ada@example.com', password: null, emailVerified: true });
    class ConnectsAda extends SocialAccountAdapter {
      override preSocialLogin(): SocialLoginDecision {
        return { connectTo: ada };
      }
    }
    const deps = { ...latchkey.deps, socialAdapter: new ConnectsAda(latchkey.settings) };
    expect(await askPreSocialLogin(deps, ATTEMPT)).toMatchObject({ kind: 'connect_to', user: { id: ada.id } });
    for (const attempt of [{ ...ATTEMPT, process: 'connect' as const, requester: ada }, { ...ATTEMPT, connectedUser: ada }]) {
      await expect(askPreSocialLogin(deps, attempt)).rejects.toThrow(/is for a login/);
    }
    for (const answer of ['ada', { connectTo: 'ada' }, { connect: ada }]) {
      class Odd extends SocialAccountAdapter {
        override preSocialLogin(): SocialLoginDecision {
          return answer as unknown as SocialLoginDecision;
        }
      }
      await expect(askPreSocialLogin({ ...latchkey.deps, socialAdapter: new Odd(latchkey.settings) }, ATTEMPT), JSON.stringify(answer)).rejects.toThrow(/must return nothing/);
    }
  });
});
