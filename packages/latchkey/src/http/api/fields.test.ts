import { describe, expect, it } from 'vitest';
import { expectDictionary, readCharField, readCharFields } from './fields.js';

describe('readCharField (DRF CharField)', () => {
  it('reads text, trimming it unless told not to', () => {
    expect(readCharField({ name: '  Ada ' }, 'name')).toEqual({ ok: true, value: 'Ada' });
    expect(readCharField({ password: '  secret ' }, 'password', { trimWhitespace: false })).toEqual({ ok: true, value: '  secret ' });
    expect(readCharField({ n: 42 }, 'n')).toEqual({ ok: true, value: '42' });
  });

  it('gives DRF\'s message for each kind of bad value', () => {
    expect(readCharField({}, 'name')).toEqual({ ok: false, error: 'This field is required.' });
    expect(readCharField({ name: null }, 'name')).toEqual({ ok: false, error: 'This field may not be null.' });
    expect(readCharField({ name: '   ' }, 'name')).toEqual({ ok: false, error: 'This field may not be blank.' });
    for (const value of [true, ['a'], { $ne: '' }, Number.NaN]) expect(readCharField({ name: value }, 'name')).toEqual({ ok: false, error: 'Not a valid string.' });
    expect(readCharField({ name: 'a\u0000b' }, 'name')).toEqual({ ok: false, error: 'Null characters are not allowed.' });
    expect(readCharField({ name: 'a\ud800b' }, 'name')).toEqual({ ok: false, error: 'Surrogate characters are not allowed: U+D800.' });
    expect(readCharField({ name: 'abcd' }, 'name', { maxLength: 3 })).toEqual({ ok: false, error: 'Ensure this field has no more than 3 characters.' });
  });

  it('accepts a proper pair of surrogates (an emoji) and an optional field left out', () => {
    expect(readCharField({ name: 'Ada 🙂' }, 'name')).toEqual({ ok: true, value: 'Ada 🙂' });
    expect(readCharField({}, 'code', { required: false })).toEqual({ ok: true, value: undefined });
    expect(readCharField({ code: '' }, 'code', { required: false, allowBlank: true })).toEqual({ ok: true, value: '' });
  });

  it('never reads inherited properties', () => {
    expect(readCharField({}, 'toString')).toEqual({ ok: false, error: 'This field is required.' });
  });

  it('reports every field\'s error at once', () => {
    expect(readCharFields({}, { username: {}, password: {} })).toEqual({ ok: false, errors: { username: ['This field is required.'], password: ['This field is required.'] } });
  });
});

describe('expectDictionary', () => {
  it('names the JSON type as DRF (Python) does', () => {
    expect(expectDictionary(undefined)).toEqual({ ok: true, value: {} });
    expect(expectDictionary([1])).toEqual({ ok: false, error: 'Invalid data. Expected a dictionary, but got list.' });
    expect(expectDictionary('x')).toEqual({ ok: false, error: 'Invalid data. Expected a dictionary, but got str.' });
    expect(expectDictionary(null)).toEqual({ ok: false, error: 'Invalid data. Expected a dictionary, but got NoneType.' });
    expect(expectDictionary(1.5)).toEqual({ ok: false, error: 'Invalid data. Expected a dictionary, but got float.' });
  });
});
