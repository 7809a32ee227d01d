/**
 * The embedded MQTT broker (Aedes) for the zero-set-up default: it authenticates each device by its own
 * credential (username = imei1, client id `lendlock-device-<imei1>`) and confines it to its own topics;
 * the server's gateway connects as a service client with a per-process secret. A device whose credential
 * is replaced (it registered again) or revoked (de-enrolled) loses its open connections at once
 * (`disconnectDevice`). No client may send a packet larger than `maxPacketBytes`, and the server hears
 * `offline` whenever a device's last connection ends, however it ends.
 */
import { createServer, type Server, type Socket } from 'node:net';
import {
  DEVICE_OFFLINE,
  deviceClientId,
  parseDeviceTopic,
  SERVER_STATUS_TOPIC,
  TOPIC_ROOT,
  topics,
} from '@lendlock/contract';
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
  /** The largest packet (fixed header included) a client may send: a larger one closes its connection. */
  maxPacketBytes: number;
  log?: { warn(details: object, message: string): void } | undefined;
}

type Identity = { kind: 'service' } | { kind: 'loadtest' } | { kind: 'device'; imei: string };
const identities = new WeakMap<Client, Identity>();

/**
 * The only client id a device may connect with (what the simulator uses). MQTT lets a new connection take
 * over the session of the same client id (the broker closes the old one), so a free choice let one device
 * knock another off the broker over and over. Other identities may not use this prefix either.
 */
const DEVICE_CLIENT_PREFIX = 'lendlock-device-';

function authError(): AuthenticateError {
  return Object.assign(new Error('Bad username or password'), { returnCode: 4 as const });
}

/** CONNACK 2, "identifier rejected": the client id does not belong to the identity. */
function clientIdError(): AuthenticateError {
  return Object.assign(new Error('Client id not allowed for this identity'), { returnCode: 2 as const });
}

function deviceMayPublish(imei: string, topic: string): boolean {
  const parsed = parseDeviceTopic(topic);
  return parsed !== null && parsed.imei === imei && parsed.kind !== 'cmd';
}

/** Its own command topic, and the server status topic (where the server asks devices to announce themselves). */
function deviceMaySubscribe(imei: string, topic: string): boolean {
  return topic === `${TOPIC_ROOT}/${imei}/cmd` || topic === SERVER_STATUS_TOPIC;
}

/**
 * Follows a client's byte stream packet by packet, reading only each fixed header (type byte, then the
 * remaining length, 1-4 bytes) and skipping the bodies without keeping them; `accept` turns false as soon
 * as a header announces a packet larger than `max` bytes (or a malformed length).
 */
export class PacketSizeGuard {
  private phase: 'type' | 'length' | 'body' = 'type';
  private remaining = 0;
  private multiplier = 1;
  private lengthBytes = 0;
  /** Body bytes of the current packet still to come. */
  private left = 0;
  private refused = false;

  constructor(private readonly max: number) {}

  accept(chunk: Buffer): boolean {
    let i = 0;
    while (!this.refused && i < chunk.length) {
      if (this.phase === 'body') {
        const skipped = Math.min(this.left, chunk.length - i);
        this.left -= skipped;
        i += skipped;
        if (this.left === 0) this.phase = 'type';
        continue;
      }
      const byte = chunk[i++] as number;
      if (this.phase === 'type') {
        this.phase = 'length';
        this.remaining = 0;
        this.multiplier = 1;
        this.lengthBytes = 0;
        continue;
      }
      this.remaining += (byte & 0x7f) * this.multiplier;
      this.multiplier *= 128;
      this.lengthBytes += 1;
      if (byte & 0x80) {
        // MQTT allows at most four length bytes.
        if (this.lengthBytes === 4) this.refused = true;
        continue;
      }
      if (1 + this.lengthBytes + this.remaining > this.max) this.refused = true;
      this.left = this.remaining;
      this.phase = this.left === 0 ? 'type' : 'body';
    }
    return !this.refused;
  }
}

/**
 * Closes `socket` as soon as its client announces a packet over `max` bytes, before anything of it is
 * kept. Neither library can: Aedes 1.x has no packet size option (its docs ask to "pair it with a
 * transport-level frame limit"), and mqtt-packet's parser, which Aedes creates without settings, has no
 * size setting at all: it collects the whole announced length in memory before parsing, so one 250 MB
 * PUBLISH cost the process over a gigabyte. Aedes reads the socket only through `read()` (paused mode, on
 * 'readable'), so every byte it parses passes through this wrapper; what it has not read yet stays within
 * the socket's high-water mark, and TCP holds back the rest.
 */
function limitPacketSize(socket: Socket, max: number, onRefused: () => void): void {
  const guard = new PacketSizeGuard(max);
  const read = socket.read.bind(socket);
  socket.read = (size?: number) => {
    const chunk: Buffer | null = read(size);
    if (chunk === null || guard.accept(chunk)) return chunk;
    onRefused();
    socket.destroy(new Error(`MQTT packet larger than ${max} bytes`));
    return null;
  };
}

export async function startEmbeddedBroker(options: BrokerOptions): Promise<EmbeddedBroker> {
  /** The open connections of each device, from its authentication until its socket closes. */
  const devices = new Map<string, Set<Client>>();

  /**
   * A clean DISCONNECT suppresses the will, so a device that left without saying `offline` stayed online
   * forever. When the last connection of a device closes, for any reason, the broker itself says
   * `offline` on the device's status topic: the gateway hears it in order with everything else. A newer
   * connection of the same device joins the set when it authenticates, before it can take over the old
   * session or publish `online`, so an old connection closing never turns a newer one offline; and when
   * this publication goes out, any later `online` comes from a connection that authenticated after it.
   */
  const track = (client: Client, imei: string) => {
    const open = devices.get(imei) ?? new Set<Client>();
    open.add(client);
    devices.set(imei, open);
    client.conn.once('close', () => {
      const still = devices.get(imei);
      if (!still?.delete(client) || still.size > 0) return;
      devices.delete(imei);
      if (broker.closed) return;
      const payload = Buffer.from(DEVICE_OFFLINE);
      broker.publish(
        { cmd: 'publish', topic: topics.status(imei), payload, qos: 1, retain: false, dup: false },
        () => {},
      );
    });
  };

  const broker: Aedes = await Aedes.createBroker({
    authenticate(client, username, password, done) {
      const secret = password?.toString('utf8') ?? '';
      // Aedes runs this before it registers the client, i.e. before it closes an older connection with
      // the same client id: a refused client id takes over nothing.
      const claimsDeviceId = client.id.startsWith(DEVICE_CLIENT_PREFIX);
      if (username === options.service.username) {
        if (secret !== options.service.password) return done(authError(), false);
        if (claimsDeviceId) return done(clientIdError(), false);
        identities.set(client, { kind: 'service' });
        return done(null, true);
      }
      if (options.loadTest && username === options.loadTest.username) {
        if (secret !== options.loadTest.password) return done(authError(), false);
        if (claimsDeviceId) return done(clientIdError(), false);
        identities.set(client, { kind: 'loadtest' });
        return done(null, true);
      }
      if (!username || !/^\d{15}$/.test(username) || !secret) return done(authError(), false);
      if (client.id !== deviceClientId(username)) return done(clientIdError(), false);
      options.authenticateDevice(username, secret).then(
        (ok) => {
          // Gone while its credential was checked: Aedes drops the answer, and it must not be tracked.
          if (client.closed || client.conn.destroyed) return done(authError(), false);
          if (ok) {
            identities.set(client, { kind: 'device', imei: username });
            track(client, username);
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
        const allowed =
          subscription.topic.startsWith(`${TOPIC_ROOT}/`) || subscription.topic === SERVER_STATUS_TOPIC;
        return callback(null, allowed ? subscription : null);
      }
      // A refused subscription gets a failure return code (0x80), not a disconnect.
      return callback(null, deviceMaySubscribe(identity.imei, subscription.topic) ? subscription : null);
    },
  });
  const server: Server = createServer((socket) => {
    let client: Client | undefined;
    limitPacketSize(socket, options.maxPacketBytes, () =>
      options.log?.warn(
        { clientId: client?.id ?? null, remoteAddress: socket.remoteAddress, limit: options.maxPacketBytes },
        'mqtt: closed a connection that sent a packet over MQTT_MAX_PACKET_BYTES',
      ),
    );
    client = broker.handle(socket);
  });
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
      // Closed without a DISCONNECT: the broker publishes the device's will (offline), and `offline` again
      // when the last socket has closed (above).
      for (const client of open) client.close();
      return open.length;
    },
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
