import { BlockList, isIP } from 'node:net';
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { LatchkeyError } from '../core/errors.js';
import { prepareEmail } from './message.js';
import { type EmailMessage, type Mailer } from './ports.js';

export interface SmtpTimeouts {
  /** Milliseconds to open the TCP (or TLS) connection. */
  connectionMs: number;
  /** Milliseconds from connecting to the server's 220 greeting. */
  greetingMs: number;
  /** Milliseconds of silence on an open connection before giving up. */
  socketMs: number;
}

/**
 * Sending happens inside a request (signup, password reset), so a dead or wedged SMTP server must fail
 * that request within seconds rather than hang it for nodemailer's defaults (two minutes to connect,
 * an hour of socket inactivity). A healthy server answers every step in well under a second.
 */
export const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 5_000, greetingMs: 5_000, socketMs: 10_000 };

export interface SmtpMailerOptions {
  host: string;
  port: number;
  /**
   * true for smtps:// (TLS from the first byte); false for smtp:// (STARTTLS when the server offers
   * it, and insisted on before authenticating to a host that is not this machine).
   */
  implicitTls: boolean;
  user?: string;
  password?: string;
  defaultFrom: string;
  /** Shown in error messages in place of the URL; must not contain the password. */
  description: string;
  timeouts?: Partial<SmtpTimeouts>;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether `host` names this machine for certain: `localhost`, an address in 127.0.0.0/8, or ::1
 * (written in any form, IPv4-mapped ones included). Any other name, even one that happens to
 * resolve to a loopback address, counts as crossing a network.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (name === 'localhost') return true;
  const family = isIP(name);
  return family !== 0 && LOOPBACK.check(name, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Whether the transport must refuse to authenticate until the connection is encrypted: smtp://
 * with credentials, to a host other than this machine.
 *
 * smtp:// starts in clear and upgrades with STARTTLS only if the server's EHLO reply offers it. A
 * network attacker who deletes that offer (STARTTLS stripping) would otherwise receive AUTH PLAIN
 * or LOGIN, the password in base64, and could send mail as the site from then on. With
 * nodemailer's requireTLS the client sends STARTTLS whatever the reply says, and gives up, before
 * any AUTH, when the upgrade fails: the email fails with mail_failed and the credentials stay put.
 *
 * Left out, on purpose: smtps:// (TLS from the first byte, nothing to strip); a URL without
 * credentials (an unauthenticated relay keeps opportunistic STARTTLS, as every MTA does: the
 * messages are exposed to a stripping attacker but no long-lived secret is); and a loopback host
 * (a local relay or test server never crosses a network, and often offers no TLS at all).
 */
export function mustRequireTls(options: Pick<SmtpMailerOptions, 'host' | 'implicitTls' | 'user'>): boolean {
  return options.user !== undefined && !options.implicitTls && !isLoopbackHost(options.host);
}

export class SmtpMailer implements Mailer {
  private readonly transport: Transporter<SMTPPool.SentMessageInfo, SMTPPool.Options>;
  private readonly defaultFrom: string;
  private readonly description: string;
  private readonly password: string | undefined;

  constructor(options: SmtpMailerOptions) {
    const timeouts = { ...DEFAULT_SMTP_TIMEOUTS, ...options.timeouts };
    this.defaultFrom = options.defaultFrom;
    this.description = options.description;
    this.password = options.password;
    // maxRequeues is read by nodemailer's pool but missing from @types/nodemailer.
    const transportOptions: SMTPPool.Options & { maxRequeues: number } = {
      // A pool keeps a few connections open, so a burst of emails does not pay a TLS handshake each.
      pool: true,
      host: options.host,
      port: options.port,
      // secure=false upgrades with STARTTLS whenever the server offers it; requireTLS makes it insist
      // before sending credentials across a network (see mustRequireTls). Certificates are always
      // verified (nodemailer's default, rejectUnauthorized=true); there is deliberately no switch.
      secure: options.implicitTls,
      requireTLS: mustRequireTls(options),
      auth: options.user === undefined ? undefined : { user: options.user, pass: options.password ?? '' },
      connectionTimeout: timeouts.connectionMs,
      greetingTimeout: timeouts.greetingMs,
      socketTimeout: timeouts.socketMs,
      dnsTimeout: timeouts.connectionMs,
      // The pool re-sends a message when its connection closes mid-send, by default without limit. One
      // retry covers an idle pooled connection the server dropped; more would hang the request.
      maxRequeues: 1,
      // nodemailer logs nothing unless asked; keep it that way so credentials never reach a log.
      logger: false,
      debug: false,
    };
    this.transport = nodemailer.createTransport(transportOptions);
  }

  async send(message: EmailMessage): Promise<void> {
    const email = prepareEmail(message, this.defaultFrom);
    try {
      await this.transport.sendMail({
        from: email.from,
        to: email.to,
        subject: email.subject,
        text: email.text,
        html: email.html,
        headers: email.headers,
      });
    } catch (error) {
      throw new LatchkeyError('mail_failed', `Could not send email through ${this.description}: ${this.describe(error)}`, {
        cause: error,
      });
    }
  }

  close(): Promise<void> {
    this.transport.close();
    return Promise.resolve();
  }

  /**
   * nodemailer's messages carry the server's reply and the socket error, never the credentials (they
   * stay in the transport options). The password is still scrubbed, in case a server echoes it back.
   */
  private describe(error: unknown): string {
    if (!(error instanceof Error)) return 'unknown error';
    const code = (error as { code?: unknown }).code;
    let text = typeof code === 'string' ? `${code}: ${error.message}` : error.message;
    if (this.password) {
      for (const form of new Set([this.password, encodeURIComponent(this.password)])) {
        text = text.split(form).join('***');
      }
    }
    return text;
  }
}
