/**
 * Starts the device channel for an app: the embedded broker (unless MQTT_URL names one), the gateway that
 * carries commands to the devices and their messages back, and the periodic sweep (expiry, sending what
 * waited). The channel knows no module of the app: what to do with a device's message, the housekeeping
 * it runs and the devices' broker credentials are given to it (`ChannelHandlers`, `DeviceCredentials`,
 * wired in app.ts), and what the app needs of it once started is set on its `ChannelEndpoint`.
 */
import { randomBytes } from 'node:crypto';
import { type AckMessage, announceWithinMs, type StateMessage } from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config';
import { withPriority } from '../../db/priority';
import { type EmbeddedBroker, startEmbeddedBroker } from './broker';
import { brokerAdmitsAnonymous, connectDynsec } from './dynsec';
import { connectGateway, type Gateway } from './gateway';

/** Provisions a device's own client on an external broker under dynamic security. */
export type ProvisionDevice = (imei1: string, credential: string) => Promise<void>;

/**
 * What the channel is given to call: the server's side of every device message (each promise settles
 * once the message is applied), the housekeeping it runs, and the publisher it hands its gateway to.
 */
export interface ChannelHandlers {
  handleAck(imei: string, ack: AckMessage): Promise<void>;
  handleState(imei: string, message: StateMessage): Promise<void>;
  handleStatus(imei: string, online: boolean): Promise<void>;
  /** One pass of housekeeping (expiry, sending what waited): after each (re)connection and periodically. */
  sweep(): Promise<void>;
  /** Takes the gateway commands are published through. */
  attach(gateway: Gateway): void;
  /** `listener` is told the imei1 of a device whose credential was replaced or revoked. */
  onCredentialRevoked(listener: (imei1: string) => void): void;
  /** Waits for the work in flight, before the gateway closes. */
  drain(): Promise<void>;
}

/** What the channel asks of devices' broker credentials. */
export interface DeviceCredentials {
  /** Whether `credential` is the device's current broker credential. */
  credentialMatches(imei: string, credential: string): Promise<boolean>;
  /** Whether the device still has a credential (it is enrolled). */
  hasCredential(imei: string): Promise<boolean>;
  /** How many devices have a credential (they all reconnect after a restart). */
  credentialedCount(): Promise<number>;
}

/**
 * What the app needs of the channel once it has started (container.ts builds it, `startDeviceChannel`
 * sets it): an app without a channel (the OpenAPI generator, some tests) keeps the empty values.
 */
export class ChannelEndpoint {
  /** What devices are told to connect to (no server credentials in it); null until the channel starts. */
  deviceMqttUrl: string | null = null;
  /** Provisions a device's broker client before its registration commits (external dynamic security). */
  provisionDevice: ProvisionDevice | null = null;
}

export interface DeviceChannel {
  readonly broker: EmbeddedBroker | null;
  readonly gateway: Gateway;
  /** What devices are told to connect to (no server credentials in it). */
  readonly deviceMqttUrl: string;
  /** Provisions a device's own client on an external broker under dynamic security; null otherwise. */
  readonly provisionDevice: ProvisionDevice | null;
  /** How devices are authenticated: by the embedded broker, by dynamic security, or not at all. */
  readonly deviceAuth: 'embedded' | 'dynsec' | 'anonymous';
  close(): Promise<void>;
}

export interface DeviceChannelOptions {
  config: Config;
  log: FastifyBaseLogger;
  /** Devices' broker credentials. */
  credentials: DeviceCredentials;
  /** What the channel hands devices' messages to, and the work it runs. */
  handlers: ChannelHandlers;
  /** Set once the channel has started. */
  endpoint?: ChannelEndpoint;
  /** Told of every acknowledgement once applied (the metrics). */
  ackApplied?: (imei: string, ack: { id: string; status: string }) => void;
}

function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.toString().replace(/\/$/, '');
}

/** The dynamic-security client speaks as the server's own broker identity (the credentials in MQTT_URL). */
function dynsecOptions(url: string, log: FastifyBaseLogger) {
  const parsed = new URL(url);
  return {
    url: withoutCredentials(url),
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    clientId: `lendlock-dynsec-${randomBytes(6).toString('hex')}`,
    log,
  };
}

function waitConnected(gateway: Gateway, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const check = () => {
      if (gateway.connected) return resolve(true);
      if (Date.now() - started >= ms) return resolve(false);
      setTimeout(check, 25);
    };
    check();
  });
}

export async function startDeviceChannel(options: DeviceChannelOptions): Promise<DeviceChannel> {
  const { config, log, credentials, handlers, ackApplied } = options;
  const service = { username: 'lendlock-server', password: randomBytes(24).toString('base64url') };
  // An external broker that lets anyone in lets anyone read and answer every device's commands.
  if (
    config.mqttUrl &&
    !config.mqttAllowAnonymous &&
    (await brokerAdmitsAnonymous(withoutCredentials(config.mqttUrl)))
  ) {
    throw new Error(
      `The MQTT broker at ${withoutCredentials(config.mqttUrl as string)} admits anonymous clients: any of them could read and answer every device's commands. Configure per-device authentication (docs/operations.md#the-mqtt-broker), or set MQTT_ALLOW_ANONYMOUS=on for a test broker.`,
    );
  }
  const authority =
    config.mqttUrl && config.mqttDynsec ? await connectDynsec(dynsecOptions(config.mqttUrl, log)) : null;
  const broker = config.mqttUrl
    ? null
    : await startEmbeddedBroker({
        host: config.mqttHost,
        port: config.mqttPort,
        service,
        loadTest: config.mqttLoadTestPassword
          ? { username: 'lendlock-loadtest', password: config.mqttLoadTestPassword }
          : undefined,
        authenticateDevice: (imei, credential) => credentials.credentialMatches(imei, credential),
        maxPacketBytes: config.mqttMaxPacketBytes,
        log,
      });
  const gateway = connectGateway({
    url: config.mqttUrl ?? (broker?.url as string),
    ...(broker ? service : {}),
    sharedGroup: broker ? null : config.mqttSharedGroup,
    clientId: `lendlock-server-${randomBytes(6).toString('hex')}`,
    log,
    announceWithinMs: async () => announceWithinMs(await credentials.credentialedCount()),
    handlers: {
      onAck: async (imei, ack) => {
        // The acknowledgement of a priority command (a release typed at the counter) is applied as
        // priority work: its transaction takes the reserved database pool (db/priority.ts), not a place
        // behind the reads and the batch chunks.
        const priority = gateway.priorityOf(ack.id);
        if (priority === undefined) await handlers.handleAck(imei, ack);
        else await withPriority(priority, () => handlers.handleAck(imei, ack));
        ackApplied?.(imei, ack);
      },
      onState: (imei, state) => handlers.handleState(imei, state),
      onStatus: (imei, online) => handlers.handleStatus(imei, online),
      onConnected: () => {
        handlers.sweep().catch((error: unknown) => log.error({ err: error }, 'device channel: sweep failed'));
      },
    },
  });
  handlers.attach(gateway);
  // A replaced or revoked credential ends the device's open connections (the embedded broker; an external
  // one checks the credential when the device connects again: docs/operations.md).
  handlers.onCredentialRevoked((imei) => {
    const closed = broker?.disconnectDevice(imei) ?? 0;
    if (closed > 0) log.info({ imei, connections: closed }, 'device credential revoked: disconnected');
    // Under dynamic security a registration replaced the client already; a de-enrolled device loses it.
    if (authority) {
      credentials
        .hasCredential(imei)
        .then((has) => (has ? undefined : authority.removeDevice(imei)))
        .catch((error: unknown) =>
          log.error(
            { err: error, imei },
            'device channel: removing a de-enrolled device from the broker failed',
          ),
        );
    }
  });
  // The embedded broker is in this process: wait for it. An external one may be down; commands then queue.
  if (!(await waitConnected(gateway, broker ? 5000 : 3000)))
    log.warn('device channel: broker not reachable yet');

  const timer = setInterval(() => {
    handlers.sweep().catch((error: unknown) => log.error({ err: error }, 'device channel: sweep failed'));
  }, config.dispatchIntervalMs);
  timer.unref();

  const deviceMqttUrl =
    config.deviceMqttUrl ??
    (config.mqttUrl ? withoutCredentials(config.mqttUrl) : `mqtt://localhost:${broker?.port}`);
  const provisionDevice: ProvisionDevice | null = authority
    ? (imei, credential) => authority.provisionDevice(imei, credential)
    : null;
  if (options.endpoint) {
    options.endpoint.deviceMqttUrl = deviceMqttUrl;
    options.endpoint.provisionDevice = provisionDevice;
  }
  return {
    broker,
    gateway,
    deviceMqttUrl,
    provisionDevice,
    deviceAuth: broker ? 'embedded' : authority ? 'dynsec' : 'anonymous',
    close: async () => {
      clearInterval(timer);
      await handlers.drain();
      await gateway.close();
      await authority?.close();
      await broker?.close();
    },
  };
}
