// A local SMTP server (smtp-server, the protocol for real) that keeps what it receives: the mail the
// service sends through nodemailer when LIPSYNC_SMTP_URL points here.
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';

export interface ReceivedMail {
  readonly from: string;
  readonly to: string[];
  /** The whole message as sent (headers and body). */
  readonly raw: string;
}

export interface FakeSmtp {
  readonly url: string;
  readonly mails: ReceivedMail[];
  /** Waits for the next mail to `to` (received after the call began counting from `after`). */
  nextMailTo(to: string, after?: number): Promise<ReceivedMail>;
  /** The six-digit code of the next mail to `to`. */
  nextCode(to: string): Promise<string>;
  close(): Promise<void>;
}

export async function startFakeSmtp(): Promise<FakeSmtp> {
  const mails: ReceivedMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        for (const w of waiters.splice(0)) w();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const taken = new Set<ReceivedMail>();

  async function nextMailTo(to: string): Promise<ReceivedMail> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const m = mails.find((x) => !taken.has(x) && x.to.includes(to));
      if (m) {
        taken.add(m);
        return m;
      }
      if (Date.now() > deadline) throw new Error(`no mail to ${to} arrived`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    nextMailTo,
    async nextCode(to) {
      const m = await nextMailTo(to);
      const code = /code[^:\n]*: (\d{6})/i.exec(m.raw)?.[1];
      if (!code) throw new Error(`no code in the mail to ${to}`);
      return code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
