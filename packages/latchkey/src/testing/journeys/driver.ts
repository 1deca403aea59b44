/**
 * What a journey driver is: one front door of Latchkey (the pages, the headless API's browser or
 * app client, or the token API) driven through driver-neutral steps, answering in driver-neutral
 * outcomes ('signed_in', refused('invalid_credentials')). The scenarios (scenarios.ts) speak only this.
 */
import type { TestLatchkey } from '../latchkey.js';

/** Every front door of an account, by the name the journeys test reports it under. */
export const DOORS = ['pages', 'headless browser', 'headless app', 'token api'] as const;
export type Door = (typeof DOORS)[number];

/** Why a front door said no, in driver-neutral words. */
export type RefusalCode =
  | 'invalid_credentials'
  | 'rate_limited'
  | 'signup_closed'
  | 'incorrect_code'
  | 'invalid_key'
  | 'email_taken'
  | 'username_taken'
  | 'invalid_input'
  | 'not_signed_in';

/** What a person sees after one step, whichever door they used. */
export type Outcome =
  | 'signed_in'
  /** A signup that must be confirmed from the mail before anyone signs in. */
  | 'verification_sent'
  /** A login stopped until an address is verified. */
  | 'verify_email'
  | 'mfa_required'
  | 'inactive'
  | 'email_confirmed'
  | 'signed_out'
  | 'reset_requested'
  | 'password_reset'
  | 'password_changed'
  | 'reauthentication_required'
  | 'reauthenticated'
  | 'email_added'
  | 'email_removed'
  | 'primary_changed'
  | `refused:${RefusalCode}`;

export function refused(code: RefusalCode): Outcome {
  return `refused:${code}`;
}

/** One address as the email-management screen lists it. */
export interface ListedEmail {
  email: string;
  verified: boolean;
  primary: boolean;
}

export interface SignupDetails {
  email: string;
  username: string;
  password: string;
}

/** One front door, driven as a person (or their app) would use it. */
export interface JourneyDriver {
  readonly name: string;
  signup(details: SignupDetails): Promise<Outcome>;
  login(login: string, password: string): Promise<Outcome>;
  /** The code a login stopped at mfa_required asks for (TOTP or a recovery code). */
  submitCode(code: string): Promise<Outcome>;
  /** Follows the key of a confirmation mail. */
  confirmEmail(key: string): Promise<Outcome>;
  /** The username signed in here, or null. */
  currentUser(): Promise<string | null>;
  logout(): Promise<Outcome>;
  requestPasswordReset(email: string): Promise<Outcome>;
  /** Sets a new password with the key of a reset mail. */
  resetPassword(key: string, password: string): Promise<Outcome>;
  changePassword(oldPassword: string, newPassword: string): Promise<Outcome>;
  reauthenticate(password: string): Promise<Outcome>;
  addEmail(email: string): Promise<Outcome>;
  removeEmail(email: string): Promise<Outcome>;
  makePrimary(email: string): Promise<Outcome>;
  listEmails(): Promise<ListedEmail[]>;
  /** Another browser or device on the same site, with a session of its own, at this one's address or at `ip`. */
  another(options?: { ip?: string }): JourneyDriver;
}

/** A driver on a site of its own, and how to take the site down. */
export interface OpenedDriver {
  driver: JourneyDriver;
  close(): Promise<void>;
}

export type DriverFactory = (latchkey: TestLatchkey) => Promise<OpenedDriver>;
