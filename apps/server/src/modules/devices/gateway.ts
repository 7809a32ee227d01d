/**
 * The server's side of the device channel: one MQTT client (to the embedded broker or to MQTT_URL) that
 * publishes commands (QoS 1) and receives the devices' acknowledgements, state and online status. With
 * several instances the subscriptions are shared (`$share/<group>/…`), so each message is handled once.
 */
import {
  type AckMessage,
  ackMessageSchema,
  type CommandMessage,
  DEVICE_ONLINE,
  parseDeviceTopic,
  type StateMessage,
  stateMessageSchema,
  TOPIC_ROOT,
  topics,
} from '@lendlock/contract';
import { corkPerTurn, mqttTracing } from '@lendlock/contract/node';
import type { FastifyBaseLogger } from 'fastify';
import mqtt, { type MqttClient } from 'mqtt';

export interface GatewayHandlers {
  onAck(imei: string, ack: AckMessage): Promise<void>;
  onState(imei: string, state: StateMessage): Promise<void>;
  onStatus(imei: string, online: boolean): Promise<void>;
  /** Called after every (re)connection to the broker, to send what waited meanwhile. */
  onConnected(): void;
}

export interface Gateway {
  readonly connected: boolean;
  /** Resolves when the broker has accepted the message (PUBACK); rejects when it could not be sent. */
  publish(imei: string, message: CommandMessage): Promise<void>;
  close(): Promise<void>;
}

export interface GatewayOptions {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** Shared-subscription group; null subscribes directly (a single instance, e.g. the embedded broker). */
  sharedGroup: string | null;
  clientId: string;
  log: FastifyBaseLogger;
  handlers: GatewayHandlers;
}

export function connectGateway(options: GatewayOptions): Gateway {
  const { handlers, log } = options;
  // An external broker is spoken to in MQTT 5 with the largest receive maximum: in 3.1.1 a broker holds each
  // client to its own window (Mosquitto: 20 in flight and 1,000 queued, then it DROPS QoS 1 messages), so
  // a burst of device acknowledgements beyond it would be lost. The embedded broker (Aedes) speaks 3.1.1
  // and has no such window.
  const external = options.sharedGroup !== null;
  const client: MqttClient = mqtt.connect(options.url, {
    clientId: options.clientId,
    username: options.username,
    password: options.password,
    clean: true,
    reconnectPeriod: 1000,
    connectTimeout: 5000,
    protocolVersion: external ? 5 : 4,
    ...(external ? { properties: { receiveMaximum: 65535 } } : {}),
    // Commands are the database's: a publish that cannot reach the broker fails instead of waiting in memory.
    queueQoSZero: false,
    ...mqttTracing(),
  });
  const prefix = options.sharedGroup ? `$share/${options.sharedGroup}/` : '';
  const subscriptions = ['ack', 'state', 'status'].map((kind) => `${prefix}${TOPIC_ROOT}/+/${kind}`);

  client.on('connect', () => {
    client.subscribe(subscriptions, { qos: 1 }, (error) => {
      if (error) log.error({ err: error }, 'device channel: subscribe failed');
      else handlers.onConnected();
    });
  });
  client.on('error', (error) => log.warn({ err: error }, 'device channel error'));
  corkPerTurn(client);
  client.on('offline', () => log.warn('device channel: broker unreachable; commands stay queued'));

  client.on('message', (topic, payload) => {
    const parsed = parseDeviceTopic(topic);
    if (!parsed) return;
    const text = payload.toString('utf8');
    const handle = async () => {
      if (parsed.kind === 'status') return handlers.onStatus(parsed.imei, text === DEVICE_ONLINE);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        log.warn(
          { imei: parsed.imei, kind: parsed.kind },
          'device channel: ignored a message that is not JSON',
        );
        return;
      }
      if (parsed.kind === 'ack') {
        const ack = ackMessageSchema.safeParse(json);
        if (ack.success) return handlers.onAck(parsed.imei, ack.data);
      } else if (parsed.kind === 'state') {
        const state = stateMessageSchema.safeParse(json);
        if (state.success) return handlers.onState(parsed.imei, state.data);
      }
      log.warn({ imei: parsed.imei, kind: parsed.kind }, 'device channel: ignored a malformed message');
    };
    handle().catch((error: unknown) =>
      log.error({ err: error, imei: parsed.imei }, 'device channel: handling failed'),
    );
  });

  return {
    get connected() {
      return client.connected;
    },
    publish(imei, message) {
      if (!client.connected) return Promise.reject(new Error('broker not connected'));
      return new Promise((resolve, reject) => {
        client.publish(topics.cmd(imei), JSON.stringify(message), { qos: 1 }, (error) =>
          error ? reject(error) : resolve(),
        );
      });
    },
    close: () => new Promise((resolve) => client.end(false, {}, () => resolve())),
  };
}
