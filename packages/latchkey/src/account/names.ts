import { LatchkeyError } from '../core/errors.js';
import { msg, nmsg } from '../core/i18n/message.js';

/** The longest name an account may have: the column's size in Django's user model (max_length=255). */
export const NAME_MAX_LENGTH = 255;

export const NAME_TOO_LONG = nmsg('The name may have at most {max} character.', 'The name may have at most {max} characters.', NAME_MAX_LENGTH, { max: NAME_MAX_LENGTH });
export const NAME_NOT_TEXT = msg('The name contains a character that is not text (a null character or half of a surrogate pair).');

/**
 * A person's display name as it is stored: composed (NFC, so that "é" typed as e + accent and as
 * one character are the same name), without surrounding whitespace, at most 255 characters.
 * Characters are counted as code points, as Django counts them, so an emoji is one character and
 * a name that passes here always fits PostgreSQL's varchar(255). A null character or a lone half
 * of a surrogate pair is refused rather than stored: PostgreSQL rejects the first (the request
 * would fail with a 500), and a UTF-8 driver silently replaces the second (the name would change).
 * An empty name is allowed: the field is optional.
 */
export function cleanName(raw: string): string {
  if (raw.includes('\u0000') || /\p{Cs}/u.test(raw)) throw new LatchkeyError('invalid_input', NAME_NOT_TEXT, { param: 'name', reason: 'invalid' });
  const name = raw.normalize('NFC').trim();
  if ([...name].length > NAME_MAX_LENGTH) throw new LatchkeyError('invalid_input', NAME_TOO_LONG, { param: 'name', reason: 'max_length' });
  return name;
}
