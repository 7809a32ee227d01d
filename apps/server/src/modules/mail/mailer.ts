/**
 * The mail transport: nodemailer over SMTP_URL, or, without it, an .eml file per message in
 * DATA_DIR/outbox/ (the embedded default, for development and demos). Nothing calls it directly but the
 * mail outbox worker (modules/mail/outbox.ts), which retries what it fails to send.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  /** Sends; returns the outbox file for the embedded default. */
  send(mail: Mail): Promise<{ file?: string }>;
  close(): void;
}

export function createMailer(options: {
  smtpUrl?: string | undefined;
  from: string;
  outboxDir: string;
}): Mailer {
  if (options.smtpUrl) {
    // Bounded waits, so that one send ends well within the outbox worker's lease on the mail (5 min)
    // instead of nodemailer's default of 10 minutes of socket silence.
    const transport = nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    });
    return {
      kind: 'smtp',
      async send(mail) {
        await transport.sendMail({ from: options.from, ...mail });
        return {};
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'outbox',
    async send(mail) {
      const info = await transport.sendMail({ from: options.from, ...mail });
      mkdirSync(options.outboxDir, { recursive: true });
      const file = join(
        options.outboxDir,
        `${new Date().toISOString().replace(/[:.]/g, '-')}-${info.messageId.replace(/[^a-z0-9]/gi, '')}.eml`,
      );
      writeFileSync(file, info.message as Buffer, { mode: 0o600 });
      return { file };
    },
    close: () => transport.close(),
  };
}
