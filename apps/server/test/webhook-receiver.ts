/**
 * Receivers for webhook tests: a real HTTP one that verifies every request's Standard Webhooks signature,
 * and a tarpit that accepts connections and never answers.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import { Webhook } from 'standardwebhooks';

export class Receiver {
  readonly received: {
    id: string;
    type: string;
    body: Record<string, unknown>;
    headers: IncomingHttpHeaders;
    /** When it arrived (Date.now()). */
    at: number;
  }[] = [];
  /** Every request, whatever the answer. */
  hits = 0;
  readonly rejected: string[] = [];
  /** Answer with this status (a receiver in trouble); 204 by default. */
  status = 204;
  private server: Server | undefined;
  port = 0;
  secret = '';

  async start(port = 0): Promise<void> {
    const server = createServer((req, res) => {
      this.hits += 1;
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
              at: Date.now(),
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

/** A receiver that accepts connections and never answers (a tarpit): counts its connections. */
export class Tarpit {
  private readonly sockets = new Set<Socket>();
  private server: NetServer | undefined;
  port = 0;
  /** Connections open now, the most open at once, and all so far. */
  open = 0;
  maxOpen = 0;
  connections = 0;

  async start(): Promise<void> {
    const server = createNetServer((socket) => {
      this.sockets.add(socket);
      this.connections += 1;
      this.open += 1;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      socket.on('data', () => {});
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.open -= 1;
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }
}
