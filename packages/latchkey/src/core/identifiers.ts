/**
 * Normalization and validation of the identifiers people sign in with: usernames and email
 * addresses. Every lookup, uniqueness check, rate-limit key and outgoing email uses the forms these
 * functions return, so that two spellings of one identifier can never name two accounts, and a
 * look-alike spelling can never steer mail to an address other than the stored one.
 */
import { domainToASCII } from 'node:url';
import { LatchkeyError } from './errors.js';
import { msg, nmsg, type Message } from './i18n/message.js';

export const USERNAME_MAX_LENGTH = 150;
export const EMAIL_MAX_LENGTH = 254;

const LOCAL_PART_MAX_LENGTH = 64;
const RAW_EMAIL_MAX_LENGTH = 1024;
const DOMAIN_LABEL_MAX_LENGTH = 63;

/**
 * Django's username characters (`^[\w.@+-]+$` with Python's Unicode `\w`): letters and numbers of
 * any script, underscore, and `. @ + -`. JavaScript's `\w` is ASCII-only even with the `u` flag,
 * hence the explicit property classes. Whitespace, control and format characters (bidi overrides,
 * zero-width joiners) are all outside this set, which keeps invisible look-alikes out.
 */
const USERNAME_PATTERN = /^[\p{L}\p{N}_.@+-]+$/u;

/** RFC 5322 dot-atom with ASCII atext only: no quoted local parts, no commas, no spaces. */
const LOCAL_PART_PATTERN = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * Before IDNA conversion the domain may hold non-ASCII letters (an internationalized domain), but
 * of ASCII only what a host name can contain. This matters because `domainToASCII` follows the
 * WHATWG host parser, which percent-decodes ('exa%6dple.com' becomes 'example.com') and rewrites
 * numeric hosts ('0x7f.1' becomes '127.0.0.1'); we refuse such spellings instead of silently
 * turning them into another address.
 */
const DOMAIN_ASCII_CHARACTERS = /^(?:[A-Za-z0-9.-]|\P{ASCII})+$/u;
const DOMAIN_LABEL_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The key on which usernames are unique and looked up: NFKC, then full case folding approximated
 * as upper- then lower-casing (so 'ß' folds to 'ss' and both sigmas fold together), then NFKC again
 * because case mapping can produce sequences that compose. "ＡＤＭＩＮ", "Admin" and "admin" share a
 * key, and so do the Kelvin sign (U+212A) and "k". It does not trim: callers that accept typed
 * input for a lookup trim it first, and validateUsername refuses surrounding whitespace.
 */
export function normalizeUsernameKey(username: string): string {
  return username.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/**
 * Validates a username typed at signup (or given to the CLI) and returns its display form: the
 * NFKC-normalized string, which is what gets stored and shown. Leading or trailing whitespace is an
 * error rather than trimmed away, so that what a person sees on the form is exactly what is stored;
 * whitespace could never be part of a valid username anyway.
 */
export function validateUsername(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0) {
    throw invalidUsername(msg('This field is required.'));
  }
  const username = raw.normalize('NFKC');
  if (username.trim() !== username) {
    throw invalidUsername(msg('Usernames cannot begin or end with whitespace.'));
  }
  // Lengths count code points, as Django counts characters, not UTF-16 units.
  const length = [...username].length;
  if (length > USERNAME_MAX_LENGTH) {
    throw invalidUsername(nmsg('Ensure this value has at most {max} character (it has {length}).', 'Ensure this value has at most {max} characters (it has {length}).', USERNAME_MAX_LENGTH, { max: USERNAME_MAX_LENGTH, length }));
  }
  if (!USERNAME_PATTERN.test(username)) {
    throw invalidUsername(msg('Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ characters.'));
  }
  return username;
}

/**
 * Returns the stored form of an email address, or throws 'invalid_email'. The form is: trimmed,
 * NFKC-normalized (fullwidth letters and the fullwidth or small commercial at fold to ASCII), an
 * ASCII dot-atom local part, an IDNA (punycode) domain, all lower-cased. Anything that does not map
 * cleanly onto one such address is rejected rather than guessed at: a comma list, a quoted local
 * part, a second '@', a homoglyph '@' that NFKC does not fold, or a dotless 'ı' in the local part.
 * The function is idempotent, so normalizing a stored address returns it unchanged.
 */
export function normalizeEmail(raw: string): string {
  const email = tryNormalizeEmail(raw);
  if (email === undefined) {
    throw invalidEmail();
  }
  return email;
}

/** normalizeEmail for untrusted input of any type (a JSON body may carry null, a number or an array). */
export function validateEmail(raw: unknown): string {
  if (typeof raw !== 'string') {
    throw invalidEmail();
  }
  return normalizeEmail(raw);
}

/** normalizeEmail for lookups: an address that cannot be normalized matches nothing. */
export function tryNormalizeEmail(raw: string): string | undefined {
  // No valid address comes near this length even with generous surrounding whitespace; refusing
  // early keeps a megabyte of input away from NFKC and IDNA processing.
  if (raw.length > RAW_EMAIL_MAX_LENGTH) {
    return undefined;
  }
  const email = raw.trim().normalize('NFKC');
  const parts = email.split('@');
  if (parts.length !== 2) {
    return undefined;
  }
  const [localPart = '', domain = ''] = parts;
  if (localPart.length > LOCAL_PART_MAX_LENGTH || !LOCAL_PART_PATTERN.test(localPart)) {
    return undefined;
  }
  const asciiDomain = toAsciiDomain(domain);
  if (asciiDomain === undefined) {
    return undefined;
  }
  const normalized = `${localPart.toLowerCase()}@${asciiDomain}`;
  return normalized.length <= EMAIL_MAX_LENGTH ? normalized : undefined;
}

function toAsciiDomain(domain: string): string | undefined {
  if (domain.length === 0 || !DOMAIN_ASCII_CHARACTERS.test(domain)) {
    return undefined;
  }
  // domainToASCII applies UTS #46 mapping (which lower-cases) and punycode; it returns '' when
  // the name is not a valid internationalized domain name.
  const ascii = domainToASCII(domain).toLowerCase();
  if (ascii.length === 0) {
    return undefined;
  }
  const labels = ascii.split('.');
  if (labels.length < 2) {
    return undefined;
  }
  const labelsValid = labels.every((label) => label.length <= DOMAIN_LABEL_MAX_LENGTH && DOMAIN_LABEL_PATTERN.test(label));
  // A top-level domain is never numeric; refusing one keeps IPv4 literals out of addresses.
  const topLevel = labels[labels.length - 1] ?? '';
  if (!labelsValid || topLevel.length < 2 || /^[0-9]+$/.test(topLevel)) {
    return undefined;
  }
  return ascii;
}

function invalidUsername(message: Message): LatchkeyError {
  return new LatchkeyError('invalid_username', message, { param: 'username' });
}

function invalidEmail(): LatchkeyError {
  return new LatchkeyError('invalid_email', 'Enter a valid email address.', { param: 'email' });
}
