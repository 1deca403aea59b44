import { isLatchkeyError } from '../core/errors.js';

/** What a test checks of a refusal: its code, its field and its message. */
export interface Refusal {
  code: string;
  param: string | undefined;
  message: string;
}

/**
 * The LatchkeyError `action` throws or rejects with; fails the test when it succeeds or fails with
 * anything else (an unexpected error is rethrown as it was).
 */
export async function latchkeyErrorOf(action: () => unknown): Promise<Refusal> {
  try {
    await action();
  } catch (error) {
    if (isLatchkeyError(error)) return { code: error.code, param: error.param, message: error.message };
    throw error;
  }
  throw new Error('expected a LatchkeyError');
}
