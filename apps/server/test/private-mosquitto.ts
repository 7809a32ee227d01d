/**
 * A private Mosquitto (Debian's binary) with the dynamic security plugin, on a free loopback port in a temp
 * dir: no anonymous access, a dynsec admin (`dynsec-admin`, as `mosquitto_ctrl dynsec init` makes it) and
 * the server's identity (`lendlock-server`): the gateway's topics (shared or direct subscriptions to the
 * devices' ack/state/status, publishing their cmd) plus the dynsec control topic, since the server itself
 * provisions devices. Devices are added at run time through the plugin. Suites: `describe.runIf(hasDynsec)`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@lendlock/testkit';

export const DYNSEC_PLUGIN = '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so';

const hasBinary = (name: string) => spawnSync(name, ['--help']).error === undefined;

/** Mosquitto, mosquitto_ctrl and the dynamic security plugin are all installed. */
export const hasDynsec = existsSync(DYNSEC_PLUGIN) && hasBinary('mosquitto') && hasBinary('mosquitto_ctrl');

export interface Identity {
  username: string;
  password: string;
}

export interface PrivateMosquitto {
  url: string;
  port: number;
  /** The server's identity: gateway topics and dynsec administration. */
  server: Identity;
  /** The plugin's admin as `dynsec init` makes it (the control topic; may read, not publish, the rest). */
  admin: Identity;
  /** What the broker printed so far (for failing tests). */
  output(): string;
  /**
   * Stops the broker with `signal` and starts it again on the same port with the same configuration (the
   * devices' dynamic-security clients kept). SIGTERM is what `systemctl restart` sends: Mosquitto then
   * publishes every connected client's will before it closes; SIGKILL sends none. `whileDown` runs
   * between the stop and the start.
   */
  restart(signal: 'SIGTERM' | 'SIGKILL', whileDown?: () => Promise<void> | void): Promise<void>;
  stop(): Promise<void>;
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(port, '127.0.0.1');
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

/** Starts `mosquitto` with `args` and waits for `port` to accept connections (10 s). */
async function startBroker(
  args: string[],
  port: number,
): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn('mosquitto', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const deadline = Date.now() + 10_000;
  while (!(await portAnswers(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`mosquitto did not start on port ${port}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => output };
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

export interface TcpGate {
  /** The gate's own address: connect here instead of to the target. */
  url: string;
  /** From now on new connections are refused (closed at once); open ones carry on. */
  hold(): void;
  /** New connections are forwarded to the target again. */
  open(): void;
  close(): Promise<void>;
}

/**
 * A TCP forwarder to `targetPort` on loopback that a test can hold shut, to decide when a client (the
 * server's gateway) gets back to a restarted broker: after the devices, for instance.
 */
export async function startTcpGate(targetPort: number): Promise<TcpGate> {
  let held = false;
  const sockets = new Set<Socket>();
  const gate = createServer((inbound) => {
    sockets.add(inbound);
    inbound.once('close', () => sockets.delete(inbound));
    inbound.on('error', () => {});
    if (held) {
      inbound.destroy();
      return;
    }
    const outbound = connect(targetPort, '127.0.0.1');
    sockets.add(outbound);
    outbound.once('close', () => {
      sockets.delete(outbound);
      inbound.destroy();
    });
    outbound.on('error', () => {});
    inbound.once('close', () => outbound.destroy());
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
  const { port } = gate.address() as { port: number };
  return {
    url: `mqtt://127.0.0.1:${port}`,
    hold: () => {
      held = true;
    },
    open: () => {
      held = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        gate.close(() => resolve());
      }),
  };
}

/** `mosquitto_ctrl dynsec init`: a config file with one client (hashed password) holding an admin role. */
function dynsecInit(file: string, identity: Identity): void {
  const result = spawnSync('mosquitto_ctrl', ['dynsec', 'init', file, identity.username, identity.password], {
    encoding: 'utf8',
  });
  if (result.status !== 0)
    throw new Error(`mosquitto_ctrl dynsec init failed: ${result.stderr}${result.stdout}`);
}

const allow = (acltype: string, topic: string) => ({ acltype, topic, allow: true });

const DEVICE_KINDS = ['ack', 'state', 'status'];

/**
 * What the gateway does: (shared) subscriptions to every device's ack/state/status, publishing every cmd
 * and the server status.
 */
const GATEWAY_ACLS = [
  ...DEVICE_KINDS.flatMap((kind) => [
    allow('subscribePattern', `$share/+/lendlock/d/+/${kind}`),
    allow('subscribePattern', `lendlock/d/+/${kind}`),
    allow('publishClientReceive', `lendlock/d/+/${kind}`),
    allow('unsubscribePattern', `$share/+/lendlock/d/+/${kind}`),
    allow('unsubscribePattern', `lendlock/d/+/${kind}`),
  ]),
  allow('publishClientSend', 'lendlock/d/+/cmd'),
  // After each (re)subscription the server asks every device to announce itself (device-protocol.md §2).
  allow('publishClientSend', 'lendlock/server/status'),
];

/** Administering the dynamic security plugin: sending commands, reading the answers. */
const PROVISIONER_ACLS = [
  allow('publishClientSend', '$CONTROL/dynamic-security/v1'),
  allow('subscribeLiteral', '$CONTROL/dynamic-security/v1/response'),
  allow('publishClientReceive', '$CONTROL/dynamic-security/v1/response'),
];

/** A plain anonymous Mosquitto (`mosquitto -p <port>`), as the repo's other broker tests use; `port` to restart one. */
export async function startAnonymousMosquitto(chosenPort?: number): Promise<{
  url: string;
  port: number;
  stop(): Promise<void>;
}> {
  const port = chosenPort ?? (await freePort());
  const { child } = await startBroker(['-p', String(port)], port);
  return { url: `mqtt://127.0.0.1:${port}`, port, stop: () => stopChild(child) };
}

export async function startPrivateMosquitto(): Promise<PrivateMosquitto> {
  const dir = await mkdtemp(join(tmpdir(), 'lendlock-mosquitto-'));
  const port = await freePort();
  const admin: Identity = { username: 'dynsec-admin', password: randomBytes(18).toString('base64url') };
  const server: Identity = { username: 'lendlock-server', password: randomBytes(18).toString('base64url') };
  const configFile = join(dir, 'dynamic-security.json');
  const serverFile = join(dir, 'server-identity.json');
  try {
    dynsecInit(configFile, admin);
    // A second init only to have mosquitto_ctrl hash the server's password; its client is merged in.
    dynsecInit(serverFile, server);
    const config = JSON.parse(await readFile(configFile, 'utf8'));
    const [serverClient] = JSON.parse(await readFile(serverFile, 'utf8')).clients;
    await rm(serverFile);
    config.clients.push({
      ...serverClient,
      textName: 'Lendlock server (gateway and device provisioning)',
      roles: [{ rolename: 'lendlock-gateway' }, { rolename: 'lendlock-provisioner' }],
    });
    config.roles.push(
      { rolename: 'lendlock-gateway', acls: GATEWAY_ACLS },
      { rolename: 'lendlock-provisioner', acls: PROVISIONER_ACLS },
    );
    await writeFile(configFile, JSON.stringify(config, null, 2));
    const confFile = join(dir, 'mosquitto.conf');
    await writeFile(
      confFile,
      [
        `listener ${port} 127.0.0.1`,
        'allow_anonymous false',
        'per_listener_settings false',
        // Started as root, Mosquitto would drop to the `mosquitto` user and could not save dynsec changes.
        `user ${userInfo().username}`,
        `plugin ${DYNSEC_PLUGIN}`,
        `plugin_opt_config_file ${configFile}`,
        'persistence false',
        'log_dest stderr',
        'log_type error',
        'log_type warning',
        'log_type notice',
        'log_type information',
        '',
      ].join('\n'),
    );
    let { child, output } = await startBroker(['-c', confFile], port);
    return {
      url: `mqtt://127.0.0.1:${port}`,
      port,
      server,
      admin,
      output: () => output(),
      restart: async (signal, whileDown) => {
        await stopChild(child, signal);
        await whileDown?.();
        ({ child, output } = await startBroker(['-c', confFile], port));
      },
      stop: async () => {
        await stopChild(child);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
