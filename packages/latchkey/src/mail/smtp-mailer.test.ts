import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isLatchkeyError, type LatchkeyError } from '../core/errors.js';
import { startTestSmtpServer, type TestSmtpServer } from '../testing/smtp.js';
import { createMailer } from './create-mailer.js';
import type { Mailer } from './ports.js';
import { isLoopbackHost, mustRequireTls } from './smtp-mailer.js';

const FROM = 'webmaster@example.com';

// Every server and mailer a test opens is closed after it, pass or fail.
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function smtpServer(options?: Parameters<typeof startTestSmtpServer>[0]): Promise<TestSmtpServer> {
  const server = await startTestSmtpServer(options);
  cleanups.push(() => server.close());
  return server;
}

function mailer(url: string, timeouts?: { connectionMs?: number; greetingMs?: number; socketMs?: number }): Mailer {
  const created = createMailer({ url, defaultFrom: FROM, smtpTimeouts: timeouts });
  cleanups.push(() => created.close());
  return created;
}

async function sendFailure(sending: Promise<void>): Promise<LatchkeyError> {
  const error: unknown = await sending.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isLatchkeyError(error)) throw new Error(`expected a LatchkeyError, got ${String(error)}`);
  return error;
}

describe('SMTP backend', () => {
  it('delivers subject, text, html, sender and recipients', async () => {
    const server = await smtpServer();
    await mailer(server.url).send({
      to: ['alice@example.com'],
      subject: 'Confirm your email',
      text: 'Open https://example.com/confirm/abc',
      html: '<p>Open <a href="https://example.com/confirm/abc">this link</a></p>',
      headers: { 'X-Latchkey-Purpose': 'email-verification' },
    });

    const [message] = server.messages;
    expect(server.messages).toHaveLength(1);
    expect(message!.envelope).toEqual({ from: FROM, to: ['alice@example.com'] });
    expect(message!.subject).toBe('Confirm your email');
    expect(message!.text).toBe('Open https://example.com/confirm/abc');
    expect(message!.html).toBe('<p>Open <a href="https://example.com/confirm/abc">this link</a></p>');
    expect(message!.headers.from).toBe(FROM);
    expect(message!.headers.to).toBe('alice@example.com');
    expect(message!.headers['x-latchkey-purpose']).toBe('email-verification');
  });

  it('uses the message sender over the default and reaches several recipients', async () => {
    const server = await smtpServer();
    await mailer(server.url).send({
      from: 'Support <support@example.com>',
      to: ['alice@example.com', 'bob@example.org'],
      subject: 'Hello',
      text: 'Hi both',
    });

    const [message] = await server.waitForMessages(1);
    expect(message!.envelope).toEqual({ from: 'support@example.com', to: ['alice@example.com', 'bob@example.org'] });
    // mailparser's rendering of an address header quotes the display name.
    expect(message!.headers.from).toBe('"Support" <support@example.com>');
    expect(message!.headers.to).toBe('alice@example.com, bob@example.org');
    expect(message!.html).toBeUndefined();
  });

  it('keeps non-ASCII subject and body intact', async () => {
    const server = await smtpServer();
    const subject = 'Vérifiez votre adresse – ✉ 確認してください';
    const text = 'Grüße, Zoë!\nЗдравствуйте 👋\nضغط هنا';
    await mailer(server.url).send({ to: ['Zoë Ñúñez <zoe@example.com>'], subject, text, html: `<p>${text}</p>` });

    const [message] = server.messages;
    expect(message!.subject).toBe(subject);
    expect(message!.text).toBe(text);
    expect(message!.html).toBe(`<p>${text}</p>`);
    expect(message!.headers.to).toBe('"Zoë Ñúñez" <zoe@example.com>');
    // The header travelled MIME-encoded: the wire carries no raw non-ASCII subject line.
    expect(message!.raw).toMatch(/^Subject: =\?UTF-8\?/m);
  });

  it('sends several messages over the pool', async () => {
    const server = await smtpServer();
    const pooled = mailer(server.url);
    await Promise.all(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => pooled.send({ to: [`${name}@example.com`], subject: name, text: name })),
    );
    const received = await server.waitForMessages(6);
    expect(received.map((message) => message.subject).sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('authenticates with URL-decoded credentials from the URL', async () => {
    const user = 'mailer@example.com';
    const pass = 'p@ss:w/rd %?#é';
    // The test server offers no STARTTLS: on 127.0.0.1 the mailer still authenticates in clear.
    const server = await smtpServer({ auth: { user, pass } });
    const url = server.url.replace('//', `//${encodeURIComponent(user)}:${encodeURIComponent(pass)}@`);
    await mailer(url).send({ to: ['alice@example.com'], subject: 'Authenticated', text: 'ok' });

    expect(server.authAttempts).toEqual([user]);
    expect(server.messages.map((message) => message.subject)).toEqual(['Authenticated']);
  });

  it('fails with mail_failed, without the password, when the credentials are wrong', async () => {
    const server = await smtpServer({ auth: { user: 'mailer', pass: 'right-password' } });
    const url = server.url.replace('//', '//mailer:wrong-s3cret@');
    const error = await sendFailure(mailer(url).send({ to: ['alice@example.com'], subject: 'x', text: 'x' }));

    expect(error.code).toBe('mail_failed');
    expect(error.message).toContain('smtp://mailer:***@127.0.0.1');
    expect(error.message).not.toContain('wrong-s3cret');
    expect(error.cause).toBeInstanceOf(Error);
    expect(server.messages).toHaveLength(0);
  });

  it('fails with mail_failed, without the password, when the server refuses the message', async () => {
    const server = await smtpServer({ failWith: 550, auth: { user: 'mailer', pass: 'correct-s3cret' } });
    const url = server.url.replace('//', '//mailer:correct-s3cret@');
    const error = await sendFailure(mailer(url).send({ to: ['alice@example.com'], subject: 'x', text: 'x' }));

    expect(error.code).toBe('mail_failed');
    expect(error.message).toContain('550');
    expect(error.message).not.toContain('correct-s3cret');
    expect(JSON.stringify(error)).not.toContain('correct-s3cret');
    expect(server.messages).toHaveLength(0);
  });

  it('fails with mail_failed on a temporary refusal too', async () => {
    const server = await smtpServer({ failWith: 451 });
    const error = await sendFailure(mailer(server.url).send({ to: ['alice@example.com'], subject: 'x', text: 'x' }));
    expect(error.code).toBe('mail_failed');
    expect(error.message).toContain('451');
  });

  it('fails with mail_failed when nothing listens on the port', async () => {
    const port = await closedPort();
    const error = await sendFailure(
      mailer(`smtp://user:s3cret@127.0.0.1:${port}`).send({ to: ['alice@example.com'], subject: 'x', text: 'x' }),
    );
    expect(error.code).toBe('mail_failed');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain('s3cret');
  });

  it('gives up on a server that accepts the connection but never greets', async () => {
    const silent = await startSilentServer();
    // A short greeting timeout stands in for the default few seconds; the test measures no time.
    const error = await sendFailure(
      mailer(`smtp://127.0.0.1:${silent.port}`, { greetingMs: 200 }).send({ to: ['a@example.com'], subject: 'x', text: 'x' }),
    );
    expect(error.code).toBe('mail_failed');
    expect(error.message).toMatch(/greeting/i);
  });

  it('refuses a subject with a line break and sends nothing', async () => {
    const server = await smtpServer();
    const error = await sendFailure(
      mailer(server.url).send({ to: ['alice@example.com'], subject: 'Hello\r\nBcc: victim@example.com', text: 'x' }),
    );
    expect(error.code).toBe('invalid_input');
    expect(error.param).toBe('subject');
    expect(server.messages).toHaveLength(0);
  });
});

describe('credentials and STARTTLS stripping', () => {
  it('requires TLS before authenticating with smtp:// to any host that is not this machine', () => {
    for (const host of ['mail.example.com', 'smtp.example.com.', '192.0.2.10', '10.0.0.1', '2001:db8::25', '::ffff:192.0.2.10', 'localhost.example.com', '127.0.0.1.example.com', '127.1']) {
      expect(isLoopbackHost(host), host).toBe(false);
      expect(mustRequireTls({ host, implicitTls: false, user: 'mailer' }), host).toBe(true);
      // Without credentials there is no secret to lose; with smtps:// there is no STARTTLS to strip.
      expect(mustRequireTls({ host, implicitTls: false, user: undefined }), host).toBe(false);
      expect(mustRequireTls({ host, implicitTls: true, user: 'mailer' }), host).toBe(false);
    }
  });

  it('exempts loopback hosts: localhost, 127.0.0.0/8 and ::1', () => {
    for (const host of ['localhost', 'LocalHost.', '127.0.0.1', '127.8.9.10', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(mustRequireTls({ host, implicitTls: false, user: 'mailer' }), host).toBe(false);
    }
  });
});

/** A port that was free a moment ago and has nothing listening now. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A TCP server that accepts connections and never says anything: a wedged SMTP server. */
async function startSilentServer(): Promise<{ port: number }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port };
}
