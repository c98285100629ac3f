// Where one-time sign-in codes and invitations go: an SMTP server when LIPSYNC_SMTP_URL is set (nodemailer), else
// the operator's console (the server log), so that a fresh install can sign in without mail set up.
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { SessionsConfig } from '../config.js';

export interface CodeMail {
  readonly to: string;
  readonly code: string;
  /** better-auth's purpose of the code: sign-in, email-verification or forget-password. */
  readonly purpose: string;
  readonly expiresInMinutes: number;
}

/** An invitation to join an organization: a single-use account link. */
export interface InvitationMail {
  readonly to: string;
  readonly link: string;
  readonly organizationName: string;
  readonly role: string;
  readonly expiresInHours: number;
}

export interface Mailer {
  /** Where mail goes: an SMTP server, or the server log. */
  readonly delivery: 'email' | 'log';
  sendCode(mail: CodeMail): Promise<void>;
  sendInvitation(mail: InvitationMail): Promise<void>;
  close(): Promise<void>;
}

const PURPOSES: Record<string, string> = {
  'sign-in': 'sign in',
  'email-verification': 'confirm your email address',
  'forget-password': 'reset your password',
};

function text(mail: CodeMail): string {
  const what = PURPOSES[mail.purpose] ?? 'sign in';
  return [
    `Your code to ${what}: ${mail.code}`,
    '',
    `It works once, for ${mail.expiresInMinutes} minutes. If you did not ask for it, ignore this email.`,
  ].join('\n');
}

function invitationText(mail: InvitationMail): string {
  return [
    `You are invited to join ${mail.organizationName} as ${mail.role}.`,
    '',
    `Open this link to make your account (it works once, for ${mail.expiresInHours} hours):`,
    mail.link,
    '',
    'If you did not expect this invitation, ignore this email.',
  ].join('\n');
}

export class SmtpMailer implements Mailer {
  readonly delivery = 'email' as const;
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async sendCode(mail: CodeMail): Promise<void> {
    await this.transport.sendMail({
      from: this.from,
      to: mail.to,
      subject: `Your code: ${mail.code}`,
      text: text(mail),
    });
  }

  async sendInvitation(mail: InvitationMail): Promise<void> {
    await this.transport.sendMail({
      from: this.from,
      to: mail.to,
      subject: `Invitation to ${mail.organizationName}`,
      text: invitationText(mail),
    });
  }

  async close(): Promise<void> {
    this.transport.close();
  }
}

/** Without SMTP: one warning-level line per code, so that the operator sees it at the default level. */
export class ConsoleMailer implements Mailer {
  readonly delivery = 'log' as const;
  constructor(private readonly logger: Logger) {}

  async sendInvitation(mail: InvitationMail): Promise<void> {
    this.logger.warn(
      { to: mail.to, role: mail.role },
      `invitation for ${mail.to} (${mail.role}): ${mail.link} (no SMTP server configured: LIPSYNC_SMTP_URL)`,
    );
  }

  async sendCode(mail: CodeMail): Promise<void> {
    this.logger.warn(
      { to: mail.to, purpose: mail.purpose },
      `one-time code for ${mail.to} (${mail.purpose}): ${mail.code} (no SMTP server configured: LIPSYNC_SMTP_URL)`,
    );
  }

  async close(): Promise<void> {}
}

export function createMailer(config: SessionsConfig, logger: Logger): Mailer {
  return config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.smtpFrom) : new ConsoleMailer(logger);
}
