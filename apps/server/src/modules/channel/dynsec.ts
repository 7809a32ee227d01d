/**
 * Per-device credentials on an external Mosquitto (MQTT_URL), through its dynamic security plugin: the
 * server publishes JSON command lists to `$CONTROL/dynamic-security/v1` and reads the answers on
 * `…/v1/response`, each command matched to its answer by `correlationData` (several requests may be in
 * flight, and other administrators' answers arrive on the same topic).
 *
 * Each device gets a broker client (username imei1, its own credential, client id `lendlock-device-<imei1>`)
 * and a role of the same name allowing exactly its own topics (and reading the server status topic). Provisioning deletes and recreates both in
 * one command list (the plugin applies a list in one go, nothing can connect in between): `deleteClient`
 * kicks the device's open connections, so a replaced credential stops working at once. Removal deletes
 * both; a device that is not there is fine. Mosquitto kicks without publishing the will, so the server
 * learns of no `offline` status from a kicked device.
 */
import { randomBytes } from 'node:crypto';
import { deviceClientId, SERVER_STATUS_TOPIC, topics } from '@lendlock/contract';
import mqtt, { type MqttClient } from 'mqtt';

export interface DeviceBrokerAuthority {
  /**
   * Creates or replaces the device's broker client: username imei1, password credential, client id
   * `lendlock-device-<imei1>`, and a role `lendlock-device-<imei1>` that allows exactly the device's topics.
   * Replacing sets the new password and kicks the device's open connections (so an old credential stops
   * working at once). Resolves when the broker confirmed; rejects (with a clear Error) when it refused or
   * did not answer within timeoutMs.
   */
  provisionDevice(imei1: string, credential: string): Promise<void>;
  /** Removes the device's client and role (de-enrollment); open connections are kicked. Idempotent. */
  removeDevice(imei1: string): Promise<void>;
  close(): Promise<void>;
}

export interface DynsecOptions {
  url: string;
  username: string;
  password: string;
  clientId?: string;
  /** For connecting and for each request's answer; 5 s unless told. */
  timeoutMs?: number;
  log?: { warn(obj: object, msg: string): void };
}

export const DYNSEC_TOPIC = '$CONTROL/dynamic-security/v1';
export const DYNSEC_RESPONSE_TOPIC = `${DYNSEC_TOPIC}/response`;

const DEFAULT_TIMEOUT_MS = 5000;
const IMEI = /^\d{15}$/;

interface DynsecCommand {
  command: string;
  [field: string]: unknown;
}

interface DynsecAnswer {
  command?: string;
  error?: string;
  correlationData?: string;
}

interface PendingRequest {
  readonly answers: (DynsecAnswer | undefined)[];
  remaining: number;
  readonly timer: NodeJS.Timeout;
  resolve(answers: DynsecAnswer[]): void;
  reject(error: Error): void;
}

/**
 * The role's ACLs: publish its own ack/state/status, subscribe to and receive its own cmd and the server
 * status topic (where the server asks devices to announce themselves); nothing else.
 */
function deviceAcls(imei1: string): object[] {
  return [
    ...(['ack', 'state', 'status'] as const).map((kind) => ({
      acltype: 'publishClientSend',
      topic: topics[kind](imei1),
      priority: 1,
      allow: true,
    })),
    ...[topics.cmd(imei1), SERVER_STATUS_TOPIC].flatMap((topic) => [
      { acltype: 'subscribeLiteral', topic, priority: 1, allow: true },
      { acltype: 'publishClientReceive', topic, priority: 1, allow: true },
    ]),
    // Defaults would let a device receive anything it could subscribe to; say it outright.
    { acltype: 'publishClientReceive', topic: '#', priority: 0, allow: false },
  ];
}

function checkImei(imei1: string): void {
  // The imei becomes part of ACL topics: a wildcard in it would widen the device's rights.
  if (!IMEI.test(imei1)) throw new Error(`dynsec: not an imei1 (15 digits): ${JSON.stringify(imei1)}`);
}

export function connectDynsec(options: DynsecOptions): Promise<DeviceBrokerAuthority> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // Answers are published to every subscriber of the response topic: a per-client prefix keeps ours apart.
  const prefix = `lendlock-${randomBytes(6).toString('hex')}`;
  const pending = new Map<string, PendingRequest>();
  let sequence = 0;
  let closed = false;

  const client: MqttClient = mqtt.connect(options.url, {
    clientId: options.clientId ?? `lendlock-dynsec-${randomBytes(6).toString('hex')}`,
    username: options.username,
    password: options.password,
    protocolVersion: 5,
    clean: true,
    reconnectPeriod: 1000,
    connectTimeout: timeoutMs,
    // A command list is sent once, now or never: a stale one replayed after a reconnection could undo a
    // newer one. A request that could not be sent fails; the caller may try again.
    queueQoSZero: false,
  });

  const failAll = (error: Error) => {
    for (const request of pending.values()) {
      clearTimeout(request.timer);
      request.reject(error);
    }
    pending.clear();
  };

  client.on('message', (topic, payload) => {
    if (topic !== DYNSEC_RESPONSE_TOPIC) return;
    let answers: unknown;
    try {
      answers = (JSON.parse(payload.toString('utf8')) as { responses?: unknown }).responses;
    } catch {
      return;
    }
    if (!Array.isArray(answers)) return;
    for (const answer of answers as DynsecAnswer[]) {
      const correlation = answer?.correlationData;
      if (typeof correlation !== 'string' || !correlation.startsWith(`${prefix}-`)) continue;
      const separator = correlation.lastIndexOf('.');
      const request = pending.get(correlation.slice(0, separator));
      const index = Number(correlation.slice(separator + 1));
      if (!request || !Number.isInteger(index) || request.answers[index] !== undefined) continue;
      request.answers[index] = answer;
      request.remaining -= 1;
      if (request.remaining === 0) {
        clearTimeout(request.timer);
        pending.delete(correlation.slice(0, separator));
        request.resolve(request.answers as DynsecAnswer[]);
      }
    }
  });

  /** Sends one command list; resolves with one answer per command, in order (errors included). */
  const send = (commands: DynsecCommand[]): Promise<DynsecAnswer[]> =>
    new Promise((resolve, reject) => {
      if (closed) {
        reject(new Error('dynsec: client closed'));
        return;
      }
      const id = `${prefix}-${++sequence}`;
      const names = commands.map((c) => c.command).join(', ');
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`dynsec: the broker did not answer (${names}) within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, {
        answers: commands.map(() => undefined),
        remaining: commands.length,
        timer,
        resolve,
        reject,
      });
      const body = { commands: commands.map((c, i) => ({ ...c, correlationData: `${id}.${i}` })) };
      client.publish(DYNSEC_TOPIC, JSON.stringify(body), { qos: 0 }, (error) => {
        if (!error || !pending.has(id)) return;
        clearTimeout(timer);
        pending.delete(id);
        reject(new Error(`dynsec: could not send (${names}): ${error.message}`));
      });
    });

  /** Sends the list; rejects unless every command succeeded or failed only as `tolerated` allows. */
  const apply = async (
    what: string,
    commands: DynsecCommand[],
    tolerated: (command: DynsecCommand, error: string) => boolean,
  ): Promise<void> => {
    const answers = await send(commands);
    const failures = answers.flatMap((answer, i) => {
      const command = commands[i] as DynsecCommand;
      return answer.error && !tolerated(command, answer.error) ? [`${command.command}: ${answer.error}`] : [];
    });
    if (failures.length > 0) throw new Error(`dynsec: the broker refused to ${what}: ${failures.join('; ')}`);
  };

  // Deleting what is not there is the idempotent part of provisioning and removal.
  const missingIsFine = (command: DynsecCommand, error: string) =>
    (command.command === 'deleteClient' || command.command === 'deleteRole') && /not found/i.test(error);

  const authority: DeviceBrokerAuthority = {
    async provisionDevice(imei1, credential) {
      checkImei(imei1);
      if (!credential) throw new Error('dynsec: an empty credential');
      const name = deviceClientId(imei1);
      await apply(
        `provision device ${imei1}`,
        [
          { command: 'deleteClient', username: imei1 },
          { command: 'deleteRole', rolename: name },
          {
            command: 'createRole',
            rolename: name,
            textname: `Lendlock device ${imei1}`,
            acls: deviceAcls(imei1),
          },
          {
            command: 'createClient',
            username: imei1,
            password: credential,
            clientid: name,
            textname: `Lendlock device ${imei1}`,
            roles: [{ rolename: name, priority: 0 }],
          },
        ],
        missingIsFine,
      );
    },

    async removeDevice(imei1) {
      checkImei(imei1);
      await apply(
        `remove device ${imei1}`,
        [
          { command: 'deleteClient', username: imei1 },
          { command: 'deleteRole', rolename: deviceClientId(imei1) },
        ],
        missingIsFine,
      );
    },

    async close() {
      if (closed) return;
      closed = true;
      failAll(new Error('dynsec: client closed'));
      await client.endAsync(true);
    },
  };

  return new Promise((resolve, reject) => {
    let settled = false;
    const giveUp = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      closed = true;
      client.end(true);
      reject(error);
    };
    const timer = setTimeout(
      () => giveUp(new Error(`dynsec: could not connect to ${safeUrl(options.url)} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    client.once('connect', () => {
      client.subscribe(DYNSEC_RESPONSE_TOPIC, { qos: 0 }, (error) => {
        if (settled) return;
        if (error) {
          giveUp(new Error(`dynsec: may not read ${DYNSEC_RESPONSE_TOPIC}: ${error.message}`));
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(authority);
      });
    });
    client.on('error', (error) => {
      // A refused CONNECT (bad credentials) will not get better by retrying.
      if (!settled)
        giveUp(new Error(`dynsec: could not connect to ${safeUrl(options.url)}: ${error.message}`));
      else options.log?.warn({ err: error }, 'dynsec: broker connection error');
    });
    client.on('offline', () => {
      if (settled && !closed) options.log?.warn({}, 'dynsec: broker unreachable; device provisioning fails');
    });
  });
}

function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'the broker';
  }
}

/**
 * True when the broker at `url` accepts a connection with no username and no password (an anonymous
 * broker). Never throws: unreachable → false, within timeoutMs.
 */
export function brokerAdmitsAnonymous(url: string, timeoutMs = 3000): Promise<boolean> {
  return new Promise((resolve) => {
    let client: MqttClient | undefined;
    let settled = false;
    const finish = (admitted: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client?.end(true);
      resolve(admitted);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    try {
      const parsed = new URL(url);
      parsed.username = '';
      parsed.password = '';
      const probe = mqtt.connect(parsed.toString(), {
        clientId: `lendlock-probe-${randomBytes(6).toString('hex')}`,
        clean: true,
        reconnectPeriod: 0,
        connectTimeout: timeoutMs,
      });
      client = probe;
      probe.once('connect', () => finish(true));
      probe.on('error', () => finish(false));
      probe.once('close', () => finish(false));
    } catch {
      finish(false);
    }
  });
}
