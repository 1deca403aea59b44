import { describe, expect, it } from 'vitest';
import type { LoginCodeState } from './login-by-code.js';
import { codeToConfirm } from './code-to-confirm.js';

const LOGIN_CODE: LoginCodeState = { id: 'code-id', email: 'ada@example.com', codeHash: 'hash', expiresAt: '2030-01-01T00:15:00.000Z', attempts: 0 };
const ENABLED = { ACCOUNT_LOGIN_BY_CODE_ENABLED: true };
const DISABLED = { ACCOUNT_LOGIN_BY_CODE_ENABLED: false };

describe('which mailed code a sign-in code answers', () => {
  it('the code of a login stopped at login_by_code, before the code the client asked for', () => {
    const waiting = { stage: 'login_by_code' as const, next: '/after/' };
    expect(codeToConfirm(ENABLED, waiting, LOGIN_CODE)).toEqual({ kind: 'stage_code', waiting });
    expect(codeToConfirm(DISABLED, waiting, undefined)).toEqual({ kind: 'stage_code', waiting });
  });

  it("the client's own code when its login waits at another stage, or none waits", () => {
    expect(codeToConfirm(ENABLED, { stage: 'mfa_authenticate' as const }, LOGIN_CODE)).toEqual({ kind: 'login_code', state: LOGIN_CODE });
    expect(codeToConfirm(ENABLED, undefined, LOGIN_CODE)).toEqual({ kind: 'login_code', state: LOGIN_CODE });
  });

  it("no code: neither held, or only the client's own where the project no longer offers login by code", () => {
    expect(codeToConfirm(ENABLED, undefined, undefined)).toEqual({ kind: 'none' });
    expect(codeToConfirm(DISABLED, undefined, LOGIN_CODE)).toEqual({ kind: 'none' });
  });
});
