import type { FastifyBaseLogger } from 'fastify';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../core/config.js';
import type { LogPrivacy } from '../../core/logger.js';

/** One password reset mail: who gets it, and the link with its expiry. */
interface ResetMail {
  to: string;
  username: string;
  link: string;
  expiresAt: Date;
}

/** Delivers reset links (EMAIL_PROVIDER): to the log (console) or by SMTP. */
export interface EmailSender {
  sendResetLink(mail: ResetMail): Promise<void>;
  close(): void;
}

function resetMailText(mail: ResetMail, validMinutes: number): string {
  return [
    `Hello ${mail.username},`,
    '',
    'Someone (hopefully you) asked to reset your Hearth password. Open this link to choose a new one:',
    '',
    mail.link,
    '',
    `The link works once and expires in ${validMinutes} minutes, at ${mail.expiresAt.toISOString()}.`,
    'If you did not ask for this, ignore this mail: your password stays as it is.',
  ].join('\n');
}

/** EMAIL_PROVIDER=console: the documented exception to "no secret in the log", for setups without mail. */
class ConsoleEmailSender implements EmailSender {
  constructor(private readonly log: FastifyBaseLogger, private readonly privacy: LogPrivacy) {}

  async sendResetLink(mail: ResetMail): Promise<void> {
    this.log.info(
      { event: 'password_reset.console_link', user: this.privacy.user(mail.username), expires_at: mail.expiresAt.toISOString() },
      `[EMAIL_PROVIDER=console] password reset link (secret, single use, expires ${mail.expiresAt.toISOString()}): ${mail.link}`,
    );
  }

  close(): void {}
}

/** EMAIL_PROVIDER=smtp: nodemailer with SMTP_*; SMTP_TLS is implicit TLS, SMTP_STARTTLS a required upgrade. */
export class SmtpEmailSender implements EmailSender {
  private readonly transport: Transporter;

  /** A relay whose certificate comes from a private CA is trusted through NODE_EXTRA_CA_CERTS, like any TLS peer. */
  constructor(private readonly email: Config['email'], private readonly validMinutes: number) {
    this.transport = nodemailer.createTransport({
      host: email.smtpHost,
      port: email.smtpPort,
      secure: email.smtpTls,
      requireTLS: email.smtpStartTls,
      // Neither option set means plain SMTP, not an opportunistic upgrade that fails on a LAN relay's self-signed certificate.
      ignoreTLS: !email.smtpTls && !email.smtpStartTls,
      auth: email.smtpUsername ? { user: email.smtpUsername, pass: email.smtpPassword ?? '' } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    });
  }

  async sendResetLink(mail: ResetMail): Promise<void> {
    await this.transport.sendMail({
      from: this.email.smtpFrom,
      to: mail.to,
      subject: 'Reset your Hearth password',
      text: resetMailText(mail, this.validMinutes),
    });
  }

  close(): void {
    this.transport.close();
  }
}

export function emailSender(config: Config, validMinutes: number, log: FastifyBaseLogger, privacy: LogPrivacy): EmailSender {
  return config.email.provider === 'smtp' ? new SmtpEmailSender(config.email, validMinutes) : new ConsoleEmailSender(log, privacy);
}
