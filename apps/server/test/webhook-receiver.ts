/** A real HTTP receiver for webhook tests: it verifies every request's Standard Webhooks signature. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export class Receiver {
  readonly received: {
    id: string;
    type: string;
    body: Record<string, unknown>;
    headers: IncomingHttpHeaders;
  }[] = [];
  readonly rejected: string[] = [];
  /** Answer with this status (a receiver in trouble); 204 by default. */
  status = 204;
  private server: Server | undefined;
  port = 0;
  secret = '';

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          const payload = new Webhook(this.secret).verify(body, req.headers as Record<string, string>) as {
            type: string;
          };
          if (this.status >= 200 && this.status < 300)
            this.received.push({
              id: String(req.headers['webhook-id']),
              type: payload.type,
              body: payload as Record<string, unknown>,
              headers: req.headers,
            });
        } catch (error) {
          this.rejected.push(String(error));
          res.statusCode = 400;
          res.end();
          return;
        }
        res.statusCode = this.status;
        res.end();
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }
}
