/**
 * A fleet of simulated devices: registers (or reuses saved credentials), connects, keeps a share of the
 * fleet offline at any time (devices drop and come back), and counts what happens.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { DeviceRegistration } from '@lendlock/contract';
import { type Credentials, SimulatedDevice } from './device';
import { imeiFor, rng } from './imei';

export interface FleetOptions {
  server: string;
  enrollmentSecret: string;
  devices: number;
  /** Share of devices offline at any moment (0..1). */
  offlineRate?: number;
  /** Probability that a command fails on the device (0..1). */
  failRate?: number;
  seed?: number;
  /** Broker URL override (else the one the server hands out at registration). */
  mqttUrl?: string;
  /** Saves credentials here and reuses them next time (the demo across restarts). */
  credentialsFile?: string;
  /** Seconds between churn steps (devices dropping off and coming back). */
  churnSeconds?: number;
  /** Parallel registrations/connections. */
  concurrency?: number;
}

const BRANDS = [
  {
    manufacturer: 'Samsung Electronics',
    brand: 'Samsung',
    models: ['Galaxy A15', 'Galaxy M14', 'Galaxy A25'],
  },
  { manufacturer: 'Xiaomi', brand: 'Redmi', models: ['Note 13', '13C', '12 5G'] },
  { manufacturer: 'Vivo Mobile', brand: 'vivo', models: ['Y17s', 'T2x', 'Y28'] },
  { manufacturer: 'Oppo', brand: 'OPPO', models: ['A18', 'A79', 'K12x'] },
  { manufacturer: 'Realme', brand: 'realme', models: ['Narzo N55', 'C53', '12x'] },
];
const VERSIONS = ['3.2.1', '3.2.0', '3.1.4', '3.0.9'];

export function profileFor(seed: number, index: number, random: () => number): DeviceRegistration {
  const maker = BRANDS[Math.floor(random() * BRANDS.length)] ?? BRANDS[0];
  return {
    imei1: imeiFor(seed, index * 2),
    imei2: imeiFor(seed, index * 2 + 1),
    manufacturer: maker?.manufacturer ?? '',
    brand: maker?.brand ?? '',
    model: maker?.models[Math.floor(random() * 3)] ?? '',
    appversion: VERSIONS[Math.floor(random() * random() * VERSIONS.length)] ?? '3.2.1',
    apptype: random() < 0.8 ? 'DEVICE_OWNER' : 'ADMIN',
    retailer_phone: null,
  };
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

export class Fleet {
  readonly devices: SimulatedDevice[];
  private readonly random: () => number;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly options: FleetOptions) {
    const seed = options.seed ?? 1;
    this.random = rng(seed);
    this.devices = Array.from(
      { length: options.devices },
      (_, index) =>
        new SimulatedDevice(profileFor(seed, index, this.random), {
          server: options.server,
          enrollmentSecret: options.enrollmentSecret,
          failRate: options.failRate ?? 0,
          random: this.random,
          ...(options.mqttUrl ? { mqttUrl: options.mqttUrl } : {}),
        }),
    );
  }

  /** Registers every device (or reuses saved credentials) and brings the online share up. */
  async start(): Promise<void> {
    const saved = this.loadCredentials();
    const concurrency = this.options.concurrency ?? 50;
    await inBatches(this.devices, concurrency, async (device) => {
      const known = saved[device.imei];
      if (known)
        device.restore({ ...known, ...(this.options.mqttUrl ? { mqttUrl: this.options.mqttUrl } : {}) });
      else await device.register();
    });
    this.saveCredentials();
    const offline = Math.round(this.devices.length * (this.options.offlineRate ?? 0));
    await inBatches(this.devices.slice(offline), concurrency, async (device) => {
      try {
        await device.connect();
      } catch {
        // A device whose saved credential no longer works registers again.
        await device.register();
        await device.connect();
        this.saveCredentials();
      }
    });
    if (offline > 0) this.churn();
  }

  /** Every few seconds one device drops off and an offline one comes back, keeping the share steady. */
  private churn(): void {
    this.timer = setInterval(
      () => {
        if (this.stopped) return;
        const online = this.devices.filter((d) => d.online);
        const offline = this.devices.filter((d) => !d.online);
        const leaving = online[Math.floor(this.random() * online.length)];
        const coming = offline[Math.floor(this.random() * offline.length)];
        leaving?.dropOffline().catch(() => {});
        coming?.connect().catch(() => {});
      },
      (this.options.churnSeconds ?? 5) * 1000,
    );
    this.timer.unref();
  }

  summary(): {
    devices: number;
    online: number;
    received: number;
    executed: number;
    state: Record<string, number>;
  } {
    const state: Record<string, number> = { locked: 0, appsBlocked: 0, released: 0 };
    let received = 0;
    let executed = 0;
    for (const device of this.devices) {
      received += device.receivedCount;
      executed += device.executedCount;
      if (device.state.locked) state.locked = (state.locked ?? 0) + 1;
      if (device.state.appsBlocked) state.appsBlocked = (state.appsBlocked ?? 0) + 1;
      if (device.state.released) state.released = (state.released ?? 0) + 1;
    }
    return {
      devices: this.devices.length,
      online: this.devices.filter((d) => d.online).length,
      received,
      executed,
      state,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.all(this.devices.map((d) => d.disconnect().catch(() => {})));
  }

  private loadCredentials(): Record<string, Credentials> {
    const file = this.options.credentialsFile;
    if (!file || !existsSync(file)) return {};
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, Credentials>;
    } catch {
      return {};
    }
  }

  private saveCredentials(): void {
    const file = this.options.credentialsFile;
    if (!file) return;
    const all = Object.fromEntries(
      this.devices.flatMap((d) => (d.credentials ? [[d.imei, d.credentials]] : [])),
    );
    writeFileSync(file, JSON.stringify(all), { mode: 0o600 });
  }
}
