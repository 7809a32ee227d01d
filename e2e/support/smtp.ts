/** A real SMTP server inside the test process (the `smtp-server` package) that keeps what it receives. */
import { waitUntil } from '@lendlock/testkit';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface Mailbox {
  /** `smtp://127.0.0.1:<port>`, for the server's SMTP_URL. */
  url: string;
  mails: ReceivedMail[];
  /** Resolves with the first mail to `address` received after `since` mails (default: any). */
  waitForMail(address: string, options?: { since?: number; timeoutMs?: number }): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no STARTTLS offer, so nodemailer does not try to upgrade.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        mails.push({
          to: session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase()),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as { port: number };

  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async waitForMail(address, { since = 0, timeoutMs = 15_000 } = {}) {
      return waitUntil(
        `a mail to ${address}`,
        () => mails.slice(since).find((m) => m.to.includes(address.toLowerCase())),
        timeoutMs,
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The text of a quoted-printable body: soft line breaks unfolded, `=XX` escapes decoded. */
export function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The reset link of a password mail: `<base>/resetPassword/<token>`. */
export function resetLinkIn(raw: string, baseUrl: string): string {
  const text = decodeQuotedPrintable(raw);
  const base = baseUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`${base}/resetPassword/[A-Za-z0-9_-]+`).exec(text);
  if (!match) throw new Error(`no reset link in the mail:\n${raw}`);
  return match[0];
}
