/**
 * Starts the device channel for an app: the embedded broker (unless MQTT_URL names one), the gateway that
 * connects the command service to it, and the periodic sweep (expiry, sending what waited).
 */
import { randomBytes } from 'node:crypto';
import { announceWithinMs } from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config';
import { withPriority } from '../db/priority';
import type { CommandService } from '../modules/commands/service';
import { connectGateway, type Gateway } from '../modules/devices/gateway';
import type { DeviceCredentials } from '../modules/devices/service';
import { type EmbeddedBroker, startEmbeddedBroker } from './broker';
import { brokerAdmitsAnonymous, connectDynsec } from './dynsec';

export interface DeviceChannel {
  readonly broker: EmbeddedBroker | null;
  readonly gateway: Gateway;
  /** What devices are told to connect to (no server credentials in it). */
  readonly deviceMqttUrl: string;
  /** Provisions a device's own client on an external broker under dynamic security; null otherwise. */
  readonly provisionDevice: ((imei1: string, credential: string) => Promise<void>) | null;
  /** How devices are authenticated: by the embedded broker, by dynamic security, or not at all. */
  readonly deviceAuth: 'embedded' | 'dynsec' | 'anonymous';
  close(): Promise<void>;
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

export async function startDeviceChannel(
  config: Config,
  /** Devices' broker credentials (modules/devices/service.ts). */
  credentials: DeviceCredentials,
  commands: CommandService,
  log: FastifyBaseLogger,
  /** Told of every acknowledgement once applied (the metrics). */
  ackApplied?: (imei: string, ack: { id: string; status: string }) => void,
): Promise<DeviceChannel> {
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
        authenticateDevice: (imei, credential) => credentials.matches(imei, credential),
        maxPacketBytes: config.mqttMaxPacketBytes,
        log,
      });
  const gateway = connectGateway({
    url: config.mqttUrl ?? (broker?.url as string),
    ...(broker ? service : {}),
    sharedGroup: broker ? null : config.mqttSharedGroup,
    clientId: `lendlock-server-${randomBytes(6).toString('hex')}`,
    log,
    announceWithinMs: async () => announceWithinMs(await credentials.count()),
    handlers: {
      onAck: async (imei, ack) => {
        // The acknowledgement of a priority command (a release typed at the counter) is applied as
        // priority work: its transaction takes the reserved database pool (db/priority.ts), not a place
        // behind the reads and the batch chunks.
        const priority = gateway.priorityOf(ack.id);
        if (priority === undefined) await commands.handleAck(imei, ack);
        else await withPriority(priority, () => commands.handleAck(imei, ack));
        ackApplied?.(imei, ack);
      },
      onState: (imei, state) => commands.handleState(imei, state),
      onStatus: (imei, online) => commands.handleStatus(imei, online),
      onConnected: () => {
        commands.sweep().catch((error: unknown) => log.error({ err: error }, 'device channel: sweep failed'));
      },
    },
  });
  commands.attach(gateway);
  // A replaced or revoked credential ends the device's open connections (the embedded broker; an external
  // one checks the credential when the device connects again: docs/operations.md).
  commands.onCredentialRevoked((imei) => {
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
    commands.sweep().catch((error: unknown) => log.error({ err: error }, 'device channel: sweep failed'));
  }, config.dispatchIntervalMs);
  timer.unref();

  const deviceMqttUrl =
    config.deviceMqttUrl ??
    (config.mqttUrl ? withoutCredentials(config.mqttUrl) : `mqtt://localhost:${broker?.port}`);
  return {
    broker,
    gateway,
    deviceMqttUrl,
    provisionDevice: authority ? (imei, credential) => authority.provisionDevice(imei, credential) : null,
    deviceAuth: broker ? 'embedded' : authority ? 'dynsec' : 'anonymous',
    close: async () => {
      clearInterval(timer);
      await commands.drain();
      await gateway.close();
      await authority?.close();
      await broker?.close();
    },
  };
}
