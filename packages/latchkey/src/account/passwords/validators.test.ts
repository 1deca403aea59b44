import { describe, expect, it } from 'vitest';
import { englishText } from '../../core/i18n/message.js';
import { validatePassword, type PasswordContext, type PasswordPolicy } from './validators.js';

const policy: PasswordPolicy = {
  validators: ['minimum_length', 'maximum_length', 'common', 'numeric', 'user_attribute_similarity'],
  minLength: 8,
  maxBytes: 4096,
  maxSimilarity: 0.7,
};
const codes = (password: string, context = {}, custom = policy): string[] => validatePassword(password, context, custom).map((problem) => problem.code);
/** The problems as an English reader sees them. */
const inEnglish = (password: string, context: PasswordContext = {}, custom = policy) =>
  validatePassword(password, context, custom).map((problem) => ({ code: problem.code, message: englishText(problem.message) }));

describe('validatePassword', () => {
  it('accepts a long, uncommon passphrase with no composition rules', () => {
    expect(validatePassword('correct-horse-battery-staple-42', { username: 'alice', email: 'alice@example.com' }, policy)).toEqual([]);
    expect(codes('lowercase only words here')).toEqual([]);
  });

  it("refuses short passwords in Django's words", () => {
    expect(inEnglish('tr0ub4d', {}, policy)).toEqual([
      { code: 'password_too_short', message: 'This password is too short. It must contain at least 8 characters.' },
    ]);
    expect(inEnglish('', {}, { ...policy, minLength: 1 })[0]?.message).toBe('This password is too short. It must contain at least 1 character.');
    // Eight code points are enough even when they are sixteen UTF-16 units.
    expect(codes('🔑🔒🔓🗝🔐🔏🛡🚪')).toEqual([]);
  });

  it('refuses an over-long password at once, with no other check run on it', () => {
    const megabyte = '1'.repeat(1024 * 1024); // entirely numeric and common-looking: never looked at
    expect(inEnglish(megabyte, { username: '1' }, policy)).toEqual([
      { code: 'password_too_long', message: 'This password is too long. It must contain at most 4096 bytes.' },
    ]);
    expect(codes('é'.repeat(2049))).toEqual(['password_too_long']); // 4098 bytes, 2049 characters
    expect(codes('é'.repeat(2048) + 'x'.repeat(0))).toEqual([]);
  });

  it('refuses common passwords, ignoring case and surrounding spaces', () => {
    for (const password of ['password', 'PassWord ', '  qwerty123', 'iloveyou', 'letmein1']) {
      expect(codes(password), password).toContain('password_too_common');
    }
    expect(inEnglish('iloveyou', {}, policy)[0]?.message).toBe('This password is too common.');
    expect(codes('correcthorsebatterystaple')).not.toContain('password_too_common');
  });

  it('refuses entirely numeric passwords, in any script', () => {
    for (const password of ['83920175', '٣٤٥٦٧٨٩٠١', '１２３４５６７８９']) {
      expect(codes(password), password).toContain('password_entirely_numeric');
    }
    expect(inEnglish('83920175', {}, policy).find((problem) => problem.code === 'password_entirely_numeric')?.message).toBe(
      'This password is entirely numeric.',
    );
    expect(codes('8392017a')).not.toContain('password_entirely_numeric');
  });

  it('refuses passwords too similar to the username, name or email, naming which', () => {
    const context = { username: 'alicesmith', email: 'jane.doe@example.com', name: 'Robert Tables' };
    expect(inEnglish('alicesmith1', context, policy)).toEqual([
      { code: 'password_too_similar', message: 'The password is too similar to the username.' },
    ]);
    expect(inEnglish('robertables', context, policy)[0]?.message).toBe('The password is too similar to the name.');
    // Parts of the address count, and so does its local part as a whole.
    expect(inEnglish('Examples', context, policy)[0]?.message).toBe('The password is too similar to the email address.');
    expect(codes('doejane1', context)).toEqual(['password_too_similar']);
    expect(codes('Jane.Doe', context)).toEqual(['password_too_similar']);
    expect(codes('tr0ub4dor&3', context)).toEqual([]);
  });

  it("skips the comparison for a password far longer than the value, as Django's quick rejection does", () => {
    expect(codes('x'.repeat(100) + 'alicesmith', { username: 'alicesmith' })).toEqual([]);
  });

  it('ignores missing or empty attributes', () => {
    expect(codes('a-fine-password', { username: null, email: '', name: undefined })).toEqual([]);
  });

  it('runs only the validators the policy names', () => {
    expect(codes('1234', {}, { ...policy, validators: ['numeric'] })).toEqual(['password_entirely_numeric']);
    expect(codes('x'.repeat(5000), {}, { ...policy, validators: ['minimum_length'] })).toEqual([]);
  });

  it('reports every problem found, in the order the policy lists the validators', () => {
    expect(codes('12345')).toEqual(['password_too_short', 'password_too_common', 'password_entirely_numeric']);
  });
});
