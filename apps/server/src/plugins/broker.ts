/**
 * The embedded MQTT broker (Aedes) for the zero-set-up default: it authenticates each device by its own
 * credential (username = imei1) and confines it to its own topics; the server's gateway connects as a
 * service client with a per-process secret. A device whose credential is replaced (it registered again)
 * or revoked (de-enrolled) loses its open connections at once (`disconnectDevice`).
 */
import { createServer, type Server } from 'node:net';
import { parseDeviceTopic, TOPIC_ROOT } from '@lendlock/contract';
import { Aedes, type AuthenticateError, type Client } from 'aedes';

export interface EmbeddedBroker {
  /** URL for the server's own gateway (loopback). */
  readonly url: string;
  readonly port: number;
  readonly service: { username: string; password: string };
  /** Closes every connection of the device `imei`; returns how many there were. */
  disconnectDevice(imei: string): number;
  close(): Promise<void>;
}

export interface BrokerOptions {
  host: string;
  port: number;
  service: { username: string; password: string };
  /** Resolves true when `credential` is the device's current one. */
  authenticateDevice(imei: string, credential: string): Promise<boolean>;
  /** Optional load-test identity allowed on every device topic (benchmarks multiplex devices). */
  loadTest?: { username: string; password: string } | undefined;
}

type Identity = { kind: 'service' } | { kind: 'loadtest' } | { kind: 'device'; imei: string };
const identities = new WeakMap<Client, Identity>();

function authError(): AuthenticateError {
  return Object.assign(new Error('Bad username or password'), { returnCode: 4 as const });
}

function deviceMayPublish(imei: string, topic: string): boolean {
  const parsed = parseDeviceTopic(topic);
  return parsed !== null && parsed.imei === imei && parsed.kind !== 'cmd';
}

function deviceMaySubscribe(imei: string, topic: string): boolean {
  return topic === `${TOPIC_ROOT}/${imei}/cmd`;
}

export async function startEmbeddedBroker(options: BrokerOptions): Promise<EmbeddedBroker> {
  /** The open connections of each device. */
  const devices = new Map<string, Set<Client>>();
  const broker = await Aedes.createBroker({
    authenticate(client, username, password, done) {
      const secret = password?.toString('utf8') ?? '';
      if (username === options.service.username) {
        if (secret !== options.service.password) return done(authError(), false);
        identities.set(client, { kind: 'service' });
        return done(null, true);
      }
      if (options.loadTest && username === options.loadTest.username) {
        if (secret !== options.loadTest.password) return done(authError(), false);
        identities.set(client, { kind: 'loadtest' });
        return done(null, true);
      }
      if (!username || !/^\d{15}$/.test(username) || !secret) return done(authError(), false);
      options.authenticateDevice(username, secret).then(
        (ok) => {
          if (ok) {
            identities.set(client, { kind: 'device', imei: username });
            const open = devices.get(username) ?? new Set<Client>();
            open.add(client);
            devices.set(username, open);
          }
          done(ok ? null : authError(), ok);
        },
        () => done(Object.assign(new Error('Server unavailable'), { returnCode: 3 as const }), false),
      );
    },
    authorizePublish(client, packet, callback) {
      const identity = client ? identities.get(client) : { kind: 'service' as const };
      if (!identity) return callback(new Error('not authenticated'));
      if (identity.kind === 'service') return callback(null);
      if (identity.kind === 'loadtest')
        return callback(parseDeviceTopic(packet.topic) ? null : new Error('denied'));
      return callback(deviceMayPublish(identity.imei, packet.topic) ? null : new Error('denied'));
    },
    authorizeSubscribe(client, subscription, callback) {
      const identity = identities.get(client);
      if (!identity) return callback(new Error('not authenticated'));
      if (identity.kind === 'service') return callback(null, subscription);
      if (identity.kind === 'loadtest') {
        return callback(null, subscription.topic.startsWith(`${TOPIC_ROOT}/`) ? subscription : null);
      }
      // A refused subscription gets a failure return code (0x80), not a disconnect.
      return callback(null, deviceMaySubscribe(identity.imei, subscription.topic) ? subscription : null);
    },
  });
  broker.on('clientDisconnect', (client) => {
    const identity = identities.get(client);
    if (identity?.kind !== 'device') return;
    const open = devices.get(identity.imei);
    open?.delete(client);
    if (open?.size === 0) devices.delete(identity.imei);
  });
  const server: Server = createServer(broker.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const loopback = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  return {
    url: `mqtt://${loopback}:${port}`,
    port,
    service: options.service,
    disconnectDevice: (imei) => {
      const open = [...(devices.get(imei) ?? [])];
      devices.delete(imei);
      // Closed without a DISCONNECT: the broker publishes the device's will (offline).
      for (const client of open) client.close();
      return open.length;
    },
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
