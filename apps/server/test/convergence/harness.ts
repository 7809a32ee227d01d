/**
 * The convergence harness: does every phone end where its record says?
 *
 * A seeded interleaving of what happens to a fleet — operator single commands and batches, the collections
 * daily run, payments and their reversals, holds and unholds, the kill switch, devices failing commands, registering again,
 * going offline and online, the broker restarted gracefully or killed, the server killed with SIGKILL — is
 * played against a real server (a process of its own, server-process.ts, so it can be killed) and real
 * simulated agents, then the fleet is left to settle and four invariants are checked:
 *
 *  - `state`     every connected device's state (the agent's, what the phone is) equals the record's
 *                desired state, or the difference is flagged: the last command for that part FAILED;
 *  - `current`   no customer current on the loan (nothing overdue on the clock's day) is locked, unless an
 *                UNLOCK for it is on record FAILED (the operator never sends LOCK here: a lock is collections');
 *  - `pending`   no command stays QUEUED or SENT for a connected device;
 *  - `once`      nothing is sent twice: no agent executes a command id twice, no collections action holds
 *                two commands, and no kind of action is recorded twice for a device, day and trigger.
 *
 * Everything goes through public behaviour: the HTTP API, MQTT (the simulator), the database's rows (read
 * through the server process: PGlite is one process's) and the collections engine's clock. Two stacks:
 * `embedded` (PGlite and the embedded broker: a broker fault is the server's) and `mosquitto` (PostgreSQL
 * and a private Mosquitto with dynamic security, one credential per device).
 *
 * The interleaving is drawn from the seed alone (`planRun`), so a seed replays it; the report names the
 * seed, the steps and the offending rows.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DeviceState } from '@lendlock/contract';
import { rng, SimulatedDevice } from '@lendlock/device-sim';
import { freePort } from '@lendlock/testkit';
import pg from 'pg';
import { migrate, openDatabase } from '../../src/db/database';
import { type PrivateMosquitto, startPrivateMosquitto } from '../private-mosquitto';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const SERVER_SCRIPT = 'test/convergence/server-process.ts';
const ENROLLMENT_SECRET = 'convergence-enrollment-secret-0123';
const SUPERADMIN = { email: 'converge@lendlock.com', password: 'convergence-password-0123' };

export type Stack = 'embedded' | 'mosquitto';

export type Invariant = 'state' | 'current' | 'pending' | 'once';

/**
 * A payment reversal, by the payment's reference (docs/features.md § Loans and payments).
 */
export const REVERSAL = {
  path: '/api/v2/payments/reverse',
  body: (paymentRef: string) => ({ paymentRef, reason: 'convergence: reversed' }),
};

// ---- The plan ----

/** Operator commands (never LOCK: a lock is collections', so `current` can name who locked). */
const SINGLE_ACTIONS = ['unlock', 'blockapp', 'unblockapp', 'setwallpaper', 'removewallpaper'] as const;
const BATCH_PATHS = [
  '/api/bulkUnlockCopy.php',
  '/api/bulkBlockCopy.php',
  '/api/bulkUnblockCopy.php',
  '/api/bulkSetWallpaperCopy.php',
] as const;

export type Step =
  | { kind: 'single'; device: number; action: (typeof SINGLE_ACTIONS)[number] }
  | { kind: 'batch'; devices: number[]; path: (typeof BATCH_PATHS)[number] }
  | { kind: 'run' }
  | { kind: 'runKilled'; afterMs: number }
  | { kind: 'pay'; device: number; whole: boolean }
  | { kind: 'reverse'; device: number }
  | { kind: 'hold'; device: number }
  | { kind: 'unhold'; device: number }
  | { kind: 'killSwitch'; on: boolean }
  | { kind: 'failing'; device: number; on: boolean }
  | { kind: 'reenrol'; device: number }
  | { kind: 'offline'; device: number }
  | { kind: 'online'; device: number }
  | { kind: 'brokerRestart'; signal: 'SIGTERM' | 'SIGKILL'; downMs: number }
  | { kind: 'serverKill' };

export type StepKind = Step['kind'];

/** Weights of the kinds drawn. */
const WEIGHTS: [StepKind, number][] = [
  ['single', 3],
  ['batch', 2],
  ['run', 4],
  ['runKilled', 1],
  ['pay', 3],
  ['reverse', 1],
  ['hold', 1],
  ['unhold', 1],
  ['killSwitch', 1],
  ['failing', 2],
  ['reenrol', 1],
  ['offline', 2],
  ['online', 2],
  ['brokerRestart', 2],
  ['serverKill', 1],
];

/** The interleaving a seed draws: `steps` steps over `devices` devices. */
export function planRun(seed: number, steps: number, devices: number): Step[] {
  // The simulator's seeded generator (mulberry32): the same seed draws the same steps everywhere.
  const random = rng(seed);
  const int = (n: number) => Math.floor(random() * n);
  const weights = WEIGHTS;
  const total = weights.reduce((sum, [, w]) => sum + w, 0);
  const plan: Step[] = [];
  for (let i = 0; i < steps; i++) {
    let pick = random() * total;
    let kind: StepKind = 'run';
    for (const [k, w] of weights) {
      pick -= w;
      if (pick < 0) {
        kind = k;
        break;
      }
    }
    const device = int(devices);
    switch (kind) {
      case 'single':
        plan.push({ kind, device, action: SINGLE_ACTIONS[int(SINGLE_ACTIONS.length)] ?? 'unlock' });
        break;
      case 'batch': {
        const chosen = [...new Set(Array.from({ length: 1 + int(devices) }, () => int(devices)))];
        plan.push({ kind, devices: chosen, path: BATCH_PATHS[int(BATCH_PATHS.length)] ?? BATCH_PATHS[0] });
        break;
      }
      case 'runKilled':
        plan.push({ kind, afterMs: int(60) });
        break;
      case 'pay':
        plan.push({ kind, device, whole: random() < 0.6 });
        break;
      case 'failing':
        plan.push({ kind, device, on: random() < 0.5 });
        break;
      case 'killSwitch':
        plan.push({ kind, on: random() < 0.5 });
        break;
      case 'brokerRestart':
        plan.push({ kind, signal: random() < 0.5 ? 'SIGTERM' : 'SIGKILL', downMs: int(1500) });
        break;
      case 'run':
      case 'serverKill':
        plan.push({ kind });
        break;
      default:
        plan.push({ kind, device } as Step);
    }
  }
  return plan;
}

/**
 * The steps of a description (`describeStep`'s, joined by ", "), to replay a shortened interleaving:
 * CONVERGENCE_PLAN="run, run, reenrol(device=0)".
 */
export function parsePlan(text: string): Step[] {
  return [...text.matchAll(/(\w+)(?:\(([^)]*)\))?/g)].map(([, kind, args]) => {
    const step: Record<string, unknown> = { kind };
    for (const pair of (args ?? '').split(' ').filter(Boolean)) {
      const [key = '', value = ''] = pair.split('=');
      step[key] =
        key === 'devices'
          ? value.split('+').map(Number)
          : value === 'true' || value === 'false'
            ? value === 'true'
            : /^\d+$/.test(value)
              ? Number(value)
              : value;
    }
    return step as Step;
  });
}

export const describeStep = (step: Step): string => {
  const { kind, ...rest } = step;
  const args = Object.entries(rest).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : String(v)}`);
  return args.length > 0 ? `${kind}(${args.join(' ')})` : kind;
};

// ---- The server process ----

interface ServerProcess {
  child: ChildProcess;
  url: string;
  ask<T>(request: Record<string, unknown>): Promise<T>;
  output(): string;
}

async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER_SCRIPT], {
    cwd: serverDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, CONVERGENCE_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let out = '';
  const collect = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let next = 1;
  const waiting = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  child.on('message', (message: { id?: number; result?: unknown; error?: string }) => {
    if (message.id === undefined) return;
    const w = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error !== undefined) w?.fail(new Error(message.error));
    else w?.ok(message.result);
  });
  child.once('exit', () => {
    for (const w of waiting.values()) w.fail(new Error('the server process exited'));
    waiting.clear();
  });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`the server did not start:\n${out}`)), 60_000);
    child.on('message', (message: { ready?: string }) => {
      if (message.ready) {
        clearTimeout(timer);
        ok(message.ready);
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      fail(new Error(`the server exited:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    ask: <T>(request: Record<string, unknown>) =>
      new Promise<T>((ok, fail) => {
        const id = next++;
        waiting.set(id, { ok: ok as (v: unknown) => void, fail });
        child.send({ ...request, id });
      }),
  };
}

function stopProcess(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}

// ---- Databases: a migrated template per kind, a copy per run ----

export interface Templates {
  /** A migrated PGlite data dir (the tests' global template, or one the harness made). */
  pgliteDir?: string;
  /** PostgreSQL: the admin URL and a migrated template database. */
  postgresUrl?: string;
  postgresTemplate?: string;
}

/** Migrates the templates a run needs when the caller has none (the soak bench). */
export async function prepareTemplates(
  postgresUrl: string | undefined,
): Promise<Templates & { drop(): Promise<void> }> {
  const pgliteDir = mkdtempSync(join(tmpdir(), 'lendlock-converge-template-'));
  const lite = await openDatabase({ dataDir: pgliteDir });
  await migrate(lite.db);
  await lite.close();
  let postgresTemplate: string | undefined;
  if (postgresUrl) {
    postgresTemplate = `lendlock_converge_tpl_${randomBytes(4).toString('hex')}`;
    await adminQuery(postgresUrl, `CREATE DATABASE ${postgresTemplate} TEMPLATE template0`);
    const url = new URL(postgresUrl);
    url.pathname = `/${postgresTemplate}`;
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolSize: 2 });
    await migrate(database.db);
    await database.close();
  }
  return {
    pgliteDir,
    postgresUrl,
    postgresTemplate,
    drop: async () => {
      rmSync(pgliteDir, { recursive: true, force: true });
      if (postgresUrl && postgresTemplate)
        await adminQuery(postgresUrl, `DROP DATABASE IF EXISTS ${postgresTemplate} WITH (FORCE)`);
    },
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// ---- A run ----

export interface Violation {
  invariant: Invariant;
  /**
   * A cause recognised from the rows: `presence` when the record says offline while the agent is
   * connected (the server missed its `online`, and so what followed); else `reenrolment` when the part's
   * last command was executed before the phone registered again (and came back clean) and nothing
   * brought it back since; else `reordered` when an older command on the part was executed after the
   * last one (a resend of it reached the phone after the newer command, and undid it); `killSwitch` for
   * a customer current but locked while the collections kill switch is on (no unlock on payment).
   */
  cause?: 'presence' | 'reenrolment' | 'reordered' | 'killSwitch';
  imei: string;
  detail: string;
  rows: unknown[];
}

export interface RunResult {
  stack: Stack;
  seed: number;
  steps: Step[];
  /** Steps that could not be carried out, and why (a refused call is not a violation). */
  refused: string[];
  violations: Violation[];
  quiescent: boolean;
  /** The steps were given (CONVERGENCE_PLAN), not drawn from the seed. */
  planned: boolean;
  /** How long the set-up, each step (in order) and the settling took. */
  timings: { setupMs: number; stepMs: number[]; settleMs: number };
  /** What the fleet went through: commands by status, collections actions issued by kind. */
  activity: Record<string, number>;
  ms: number;
}

export interface RunOptions {
  stack: Stack;
  seed: number;
  steps: number;
  devices: number;
  templates: Templates;
  /** These steps instead of the seed's (a shortened interleaving, `parsePlan`). */
  plan?: Step[];
  /** How long the fleet may take to settle after the last step. */
  settleMs?: number;
  log?: (line: string) => void;
}

interface Customer {
  device: SimulatedDevice;
  loanRef: string;
  failing: boolean;
  /** The agent should be on the network (it reconnects by itself after a broker or server restart). */
  wanted: boolean;
  payments: string[];
  /** The last command id of the device when it last registered again (0: never). */
  reenrolledAfter: number;
}

const DAY_MS = 86_400_000;
/** Instalments every 2 days from day 2 (10 of 100.00): a run every step or two meets arrears. */
const INSTALMENTS = 10;
const INSTALMENT_EVERY = 2;

const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/** The clean-ups of the runs under way (brokers, servers, databases), for an interrupted soak. */
const underWay = new Set<() => Promise<void>>();

/** Stops what the runs under way started (the soak calls it on SIGINT). */
export async function abandonRuns(): Promise<void> {
  await Promise.all([...underWay].map((cleanup) => cleanup().catch(() => {})));
}

export async function runConvergence(options: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const { stack, seed, templates } = options;
  const cleanups: (() => Promise<void>)[] = [];
  const refused: string[] = [];
  let broker: PrivateMosquitto | null = null;
  let server: ServerProcess | null = null;
  const customers: Customer[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  underWay.add(cleanUp);
  try {
    // ---- The stack ----
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-converge-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      WEB_DIST: '/nonexistent-web-dist',
      LOG_LEVEL: 'warn',
      DEMO_DATA: 'off',
      MFA_REQUIRED_LEVELS: 'none',
      AUTHZ_CHECK: 'enforce',
      SECRETS_KEY: Buffer.alloc(32, 9).toString('base64'),
      BOOTSTRAP_SUPERADMIN_EMAIL: SUPERADMIN.email,
      BOOTSTRAP_SUPERADMIN_PASSWORD: SUPERADMIN.password,
      ENROLLMENT_SECRET,
      DISPATCH_INTERVAL: '250ms',
      // A SENT command unanswered is sent again after this (default 30 s): the fleet settles sooner.
      COMMAND_RESEND_AFTER: '3s',
      BATCH_WORKERS: '1',
      REGISTRATION_MAX_PER_ADDRESS: '100000',
    };
    if (stack === 'embedded') {
      if (!templates.pgliteDir) throw new Error('no PGlite template');
      cpSync(templates.pgliteDir, dataDir, { recursive: true });
      env.MQTT_PORT = String(await freePort());
      env.MQTT_HOST = '127.0.0.1';
    } else {
      const { postgresUrl, postgresTemplate } = templates;
      if (!postgresUrl || !postgresTemplate) throw new Error('no PostgreSQL template');
      const name = `lendlock_converge_${randomBytes(5).toString('hex')}`;
      await adminQuery(postgresUrl, `CREATE DATABASE ${name} TEMPLATE ${postgresTemplate}`);
      cleanups.push(() => adminQuery(postgresUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      const url = new URL(postgresUrl);
      url.pathname = `/${name}`;
      env.DATABASE_URL = url.toString();
      env.DATABASE_POOL_SIZE = '5';
      const started = await startPrivateMosquitto();
      broker = started;
      cleanups.push(() => started.stop());
      const mqtt = new URL(started.url);
      mqtt.username = started.server.username;
      mqtt.password = started.server.password;
      env.MQTT_URL = mqtt.toString();
      env.MQTT_DYNSEC = 'on';
      env.MQTT_SHARED_GROUP = 'converge';
    }
    const startServer = async () => {
      server = await startServerProcess(env);
      return server;
    };
    let current = await startServer();
    cleanups.push(async () => {
      if (server) await stopProcess(server.child, 'SIGKILL');
    });
    const sql = <T>(text: string, params: unknown[] = []) => current.ask<T[]>({ op: 'sql', text, params });
    const call = async (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const response = await fetch(new URL(path, current.url), {
        method,
        headers: {
          ...(body !== undefined && !(body instanceof FormData)
            ? { 'content-type': 'application/json' }
            : {}),
          ...(token ? { 'x-api-key': token } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, text };
    };
    let token = '';
    const login = async () => {
      token = '';
      const answer = await call('POST', '/api/login.php', SUPERADMIN);
      if (answer.status !== 200) throw new Error(`login: ${answer.status} ${answer.text}`);
      token = (JSON.parse(answer.text) as { token: string }).token;
    };
    await login();

    // ---- The clock, the policy, the fleet and the loans ----
    const base = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 2, 1, 10));
    let clock = base;
    let dayNumber = 0;
    const setClock = (at: Date) => {
      clock = at;
      return current.ask({ op: 'clock', at: at.toISOString() });
    };
    await setClock(clock);
    const policy = await call('PUT', '/api/v2/collections/policy', {
      policy: {
        enabled: true,
        timeZone: 'UTC',
        reminders: { preDaysBefore: 0, due: true, postEveryDays: 0 },
        lockAfterDaysOverdue: 1,
        unlockOnPayment: true,
        release: 'OFF',
        quietHours: null,
        excludedImeis: [],
        excludedRetailers: [],
      },
    });
    if (policy.status !== 200) throw new Error(`policy: ${policy.status} ${policy.text}`);

    for (let i = 0; i < options.devices; i++) {
      const customer: Customer = {
        device: null as unknown as SimulatedDevice,
        loanRef: `C-${seed}-${i}`,
        failing: false,
        wanted: true,
        payments: [],
        reenrolledAfter: 0,
      };
      customer.device = new SimulatedDevice(
        {
          imei1: imeiOf(seed, i, 0),
          imei2: imeiOf(seed, i, 1),
          manufacturer: 'Samsung Electronics',
          brand: 'Samsung',
          model: 'Galaxy A15',
          appversion: '3.2.1',
          apptype: 'DEVICE_OWNER',
          retailer_phone: null,
        },
        {
          server: current.url,
          enrollmentSecret: ENROLLMENT_SECRET,
          failRate: 0.5,
          random: () => (customer.failing ? 0 : 1),
          ...(broker ? { mqttUrl: broker.url } : {}),
        },
      );
      await customer.device.register();
      await customer.device.connect();
      customers.push(customer);
    }
    cleanups.push(async () => {
      await Promise.all(customers.map((c) => c.device.dropOffline().catch(() => {})));
    });
    const loans = await call('POST', '/api/v2/loans', {
      loans: customers.map((c) => ({
        loanRef: c.loanRef,
        imei: c.device.imei,
        customerName: `Customer ${c.loanRef}`,
        currency: 'INR',
        instalments: Array.from({ length: INSTALMENTS }, (_, k) => ({
          dueDate: dayOf(new Date(base.getTime() + (k + 1) * INSTALMENT_EVERY * DAY_MS)),
          amount: '100.00',
        })),
      })),
    });
    if (loans.status !== 200) throw new Error(`loans: ${loans.status} ${loans.text}`);

    // ---- The steps ----
    const steps = options.plan ?? planRun(seed, options.steps, options.devices);
    log(`convergence ${stack} seed=${seed}: ${steps.map(describeStep).join(', ')}`);
    const restartServer = async (signal: 'SIGTERM' | 'SIGKILL') => {
      await stopProcess(current.child, signal);
      current = await startServer();
      await setClock(clock);
    };
    const watch = async () => {
      await setClock(new Date(clock.getTime() + 2_000));
      await current.ask({ op: 'watch' });
    };
    const outstanding = async (c: Customer, whole: boolean): Promise<number> => {
      const rows = await sql<{ due: string; owed: number }>(
        `SELECT i.due_date::text AS due, (i.amount_minor - i.paid_minor)::int AS owed
           FROM loan_instalments i JOIN loans l ON l.id = i.loan_id
          WHERE l.loan_ref = $1 AND i.paid_minor < i.amount_minor ORDER BY i.seq`,
        [c.loanRef],
      );
      const today = dayOf(clock);
      const arrears = rows.filter((r) => r.due < today).reduce((sum, r) => sum + Number(r.owed), 0);
      if (whole && arrears > 0) return arrears;
      return Number(rows[0]?.owed ?? 0);
    };
    const setupMs = Date.now() - started;
    const stepMs: number[] = [];
    for (const step of steps) {
      const stepStarted = Date.now();
      const c = 'device' in step ? (customers[step.device] as Customer) : null;
      const refuse = (why: string) => refused.push(`${describeStep(step)}: ${why}`);
      switch (step.kind) {
        case 'single': {
          const answer = await call('POST', '/api/locknotification.php', {
            imei: c?.device.imei,
            action: step.action,
            user: SUPERADMIN.email,
          });
          if (answer.status !== 200) refuse(`${answer.status} ${answer.text}`);
          break;
        }
        case 'batch': {
          const form = new FormData();
          form.append('user', SUPERADMIN.email);
          const imeis = step.devices.map((d) => (customers[d] as Customer).device.imei);
          const csv = `Sno,IMEI1\r\n${imeis.map((imei, i) => `${i + 1},${imei}`).join('\r\n')}\r\n`;
          form.append('file', new Blob([csv], { type: 'text/csv' }), 'devices.csv');
          const answer = await call('POST', step.path, form);
          if (answer.status !== 200) refuse(`${answer.status} ${answer.text}`);
          break;
        }
        case 'run':
        case 'runKilled': {
          dayNumber++;
          await setClock(new Date(base.getTime() + dayNumber * DAY_MS));
          if (step.kind === 'run') {
            const state = await current.ask<string>({ op: 'run' });
            if (state !== 'DONE') refuse(`the run ended ${state}`);
          } else {
            // The server is killed while the day's run may be under way; the next instance resumes it.
            const run = current.ask<string>({ op: 'run' }).catch(() => 'KILLED');
            await new Promise((done) => setTimeout(done, step.afterMs));
            await restartServer('SIGKILL');
            await run;
            const state = await current.ask<string>({ op: 'run' });
            if (state !== 'DONE' && state !== 'NOT_DUE') refuse(`the resumed run ended ${state}`);
          }
          break;
        }
        case 'pay': {
          if (!c) break;
          const owed = await outstanding(c, step.whole);
          if (owed === 0) {
            refuse('nothing owed');
            break;
          }
          await setClock(new Date(clock.getTime() + 60_000));
          const paymentRef = `P-${seed}-${step.device}-${c.payments.length}`;
          const answer = await call('POST', '/api/v2/payments', {
            paymentRef,
            loanRef: c.loanRef,
            amount: (owed / 100).toFixed(2),
            // The API refuses a payment in the future (the engine's clock is months ahead): paid now,
            // then moved to the clock below.
            paidAt: new Date().toISOString(),
          });
          if (answer.status !== 200) {
            refuse(`${answer.status} ${answer.text}`);
            break;
          }
          c.payments.push(paymentRef);
          // Paid and received at the engine's clock (the API stamps the real time).
          await sql('UPDATE loan_payments SET received_at = $1, paid_at = $1 WHERE payment_ref = $2', [
            clock.toISOString(),
            paymentRef,
          ]);
          await watch();
          break;
        }
        case 'reverse': {
          const paymentRef = c?.payments.pop();
          if (!paymentRef) {
            refuse('no payment to reverse');
            break;
          }
          const answer = await call('POST', REVERSAL.path, REVERSAL.body(paymentRef));
          if (answer.status !== 200) refuse(`${answer.status} ${answer.text}`);
          await watch();
          break;
        }
        case 'hold': {
          const answer = await call('PUT', `/api/v2/collections/holds/${c?.device.imei}`, {
            reason: 'convergence: customer dispute',
          });
          if (answer.status !== 200) refuse(`${answer.status} ${answer.text}`);
          break;
        }
        case 'unhold': {
          const answer = await call('DELETE', `/api/v2/collections/holds/${c?.device.imei}`);
          if (answer.status !== 200) refuse(`${answer.status} ${answer.text}`);
          break;
        }
        case 'killSwitch': {
          const answer = await call('PUT', '/api/v2/collections/kill-switch', {
            on: step.on,
            reason: step.on ? 'convergence: stop' : 'convergence: go on',
          });
          if (answer.status !== 200) refuse(`${answer.status} ${answer.text}`);
          break;
        }
        case 'failing':
          if (c) c.failing = step.on;
          break;
        case 'reenrol':
          if (!c) break;
          // The phone is set up again: the agent registers with its key (proving it) from a clean state.
          await c.device.dropOffline();
          c.reenrolledAfter = Number(
            (
              await sql<{ n: number }>(
                'SELECT coalesce(max(id), 0)::int AS n FROM commands WHERE imei1 = $1',
                [c.device.imei],
              )
            )[0]?.n ?? 0,
          );
          // A phone retries a refused registration (503 while the broker cannot provision it) for a while;
          // given up, it keeps its credential, which the server did not change.
          for (let attempt = 1; ; attempt++) {
            try {
              await c.device.register();
              break;
            } catch (error) {
              if (attempt >= 10) {
                refuse(error instanceof Error ? error.message : String(error));
                break;
              }
              await new Promise((done) => setTimeout(done, 1_000));
            }
          }
          await connectAgent(c);
          c.wanted = true;
          break;
        case 'offline':
          if (!c) break;
          c.wanted = false;
          await c.device.dropOffline();
          break;
        case 'online':
          if (!c) break;
          c.wanted = true;
          if (!c.device.online) await connectAgent(c);
          break;
        case 'brokerRestart':
          if (broker)
            await broker.restart(
              step.signal,
              () => new Promise((resolve) => setTimeout(resolve, step.downMs)),
            );
          else await restartServer(step.signal);
          break;
        case 'serverKill':
          await restartServer('SIGKILL');
          break;
      }
      stepMs.push(Date.now() - stepStarted);
    }
    const settleStarted = Date.now();

    // ---- Quiescence: every wanted agent back on, the watcher's last poll, nothing left to deliver ----
    for (const c of customers) if (c.wanted && !c.device.online) await connectAgent(c);
    await watch();
    const settleMs = options.settleMs ?? 45_000;
    const deadline = Date.now() + settleMs;
    let quiescent = false;
    let last = '';
    while (Date.now() < deadline) {
      const online = customers.filter((x) => x.device.online).map((x) => x.device.imei);
      const pending = await sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM commands WHERE imei1 = ANY($1::text[]) AND status IN ('QUEUED', 'SENT', 'DELIVERED')`,
        [online],
      );
      const marks = await sql<{ h: string }>(
        `SELECT coalesce(md5(string_agg(id || status, ',' ORDER BY id)), '') AS h FROM commands`,
      );
      const now = `${online.join()}|${marks[0]?.h}|${customers.map((x) => JSON.stringify(x.device.state)).join()}`;
      if (Number(pending[0]?.n) === 0 && now === last) {
        quiescent = true;
        break;
      }
      last = now;
      await new Promise((done) => setTimeout(done, 750));
    }

    const timings = { setupMs, stepMs, settleMs: Date.now() - settleStarted };
    const violations = await checkInvariants(customers, sql, dayOf(clock));
    const activity: Record<string, number> = {};
    for (const row of await sql<{ k: string; n: number }>(
      `SELECT 'commands ' || status AS k, count(*)::int AS n FROM commands GROUP BY status
       UNION ALL SELECT 'actions ' || kind, count(*)::int FROM collection_actions WHERE state = 'ISSUED' GROUP BY kind`,
    ))
      activity[row.k] = Number(row.n);
    return {
      stack,
      seed,
      steps,
      refused,
      violations,
      quiescent,
      planned: options.plan !== undefined,
      activity,
      timings,
      ms: Date.now() - started,
    };

    async function connectAgent(c: Customer) {
      // A broker still starting answers later: the agent's client keeps trying on its own.
      await c.device.connect().catch(() => {});
    }
  } finally {
    underWay.delete(cleanUp);
    await cleanUp();
  }
}

/** A valid IMEI (Luhn) per seed, device and slot: runs with different seeds never share one. */
function imeiOf(seed: number, device: number, slot: number): string {
  const body = `35${String(seed % 1_000_000_000).padStart(9, '0')}${String(device).padStart(2, '0')}${slot}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

type Sql = <T>(text: string, params?: unknown[]) => Promise<T[]>;

interface CommandRow {
  id: number;
  imei1: string;
  command: string;
  state_key: string | null;
  interface: string;
  status: string;
  result: string | null;
  completed_at: string | null;
}

async function checkInvariants(customers: Customer[], sql: Sql, today: string): Promise<Violation[]> {
  const violations: Violation[] = [];
  const imeis = customers.map((c) => c.device.imei);
  const killSwitch =
    (await sql<{ on: boolean }>('SELECT kill_switch AS on FROM collection_control'))[0]?.on === true;
  const devices = await sql<{
    imei1: string;
    online: boolean;
    claimstatus: string;
    desired_state: Partial<DeviceState>;
    reported_state: DeviceState | null;
  }>(
    'SELECT imei1, online, claimstatus, desired_state, reported_state FROM devices WHERE imei1 = ANY($1::text[])',
    [imeis],
  );
  const commands = await sql<CommandRow>(
    `SELECT id, imei1, command, state_key, interface, status, result, completed_at FROM commands
      WHERE imei1 = ANY($1::text[]) ORDER BY id`,
    [imeis],
  );
  const owing = await sql<{ imei: string; overdue: number }>(
    `SELECT l.imei, count(*) FILTER (WHERE i.due_date < $2::date AND i.paid_minor < i.amount_minor)::int AS overdue
       FROM loans l JOIN loan_instalments i ON i.loan_id = l.id
      WHERE l.imei = ANY($1::text[]) GROUP BY l.imei`,
    [imeis, today],
  );
  for (const c of customers) {
    const imei = c.device.imei;
    const device = devices.find((d) => d.imei1 === imei);
    const mine = commands.filter((r) => r.imei1 === imei);
    const latestFor = (key: string) => mine.filter((r) => r.state_key === key).at(-1);
    if (!device) continue;
    if (c.device.online) {
      const presence = device.online ? {} : { cause: 'presence' as const };
      // state: the phone as its record says, or the difference flagged FAILED.
      for (const [key, wanted] of Object.entries(device.desired_state ?? {})) {
        const actual = c.device.state[key as keyof DeviceState];
        if (JSON.stringify(actual) === JSON.stringify(wanted)) continue;
        const latest = latestFor(key);
        if (latest?.status === 'FAILED') continue;
        const cleaned = latest?.status === 'EXECUTED' && latest.id <= c.reenrolledAfter;
        const reordered = mine.some(
          (r) =>
            r.state_key === key &&
            latest !== undefined &&
            r.id < latest.id &&
            r.status === 'EXECUTED' &&
            r.completed_at !== null &&
            latest.completed_at !== null &&
            new Date(r.completed_at) > new Date(latest.completed_at),
        );
        const cause = cleaned ? 'reenrolment' : reordered ? 'reordered' : undefined;
        violations.push({
          invariant: 'state',
          ...(device.online ? (cause ? { cause } : {}) : presence),
          imei,
          detail: `${key}: the phone has ${JSON.stringify(actual)}, the record wants ${JSON.stringify(wanted)} (its last ${key} command: ${latest ? `${latest.command} ${latest.status}` : 'none'})`,
          rows: [device, ...mine.filter((r) => r.state_key === key).slice(-4)],
        });
      }
      // pending: nothing left QUEUED or SENT for a connected device.
      const stuck = mine.filter((r) => r.status === 'QUEUED' || r.status === 'SENT');
      if (stuck.length > 0)
        violations.push({
          invariant: 'pending',
          ...presence,
          imei,
          detail: `${stuck.length} command(s) ${stuck.map((r) => `${r.command} ${r.status}`).join(', ')} for a connected device (its record says online=${device.online})`,
          rows: stuck,
        });
      // current: a customer with nothing overdue is not locked.
      const overdue = Number(owing.find((o) => o.imei === imei)?.overdue ?? 0);
      if (overdue === 0 && (c.device.state.locked || device.desired_state?.locked === true)) {
        const unlock = latestFor('locked');
        if (!(unlock?.command === 'UNLOCK' && unlock.status === 'FAILED'))
          violations.push({
            invariant: 'current',
            ...(device.online ? (killSwitch ? { cause: 'killSwitch' as const } : {}) : presence),
            imei,
            detail: `nothing overdue on ${today}, yet the phone is ${c.device.state.locked ? 'locked' : 'unlocked'} and the record wants locked=${String(device.desired_state?.locked)}`,
            rows: [device, ...mine.filter((r) => r.state_key === 'locked').slice(-4)],
          });
      }
    }
    // once: no command id executed twice by the agent.
    for (const id of c.device.executions.keys()) {
      const times = c.device.executions.get(id) ?? 0;
      if (times > 1)
        violations.push({
          invariant: 'once',
          imei,
          detail: `command ${id} executed ${times} times`,
          rows: [],
        });
    }
  }
  const doubled = await sql<Record<string, unknown>>(
    `SELECT imei1, kind, action_date::text AS day, trigger_payment_id, count(*)::int AS n,
            count(DISTINCT command_id)::int AS commands
       FROM collection_actions WHERE imei1 = ANY($1::text[]) AND state = 'ISSUED'
      GROUP BY imei1, kind, action_date, trigger_payment_id HAVING count(*) > 1`,
    [imeis],
  );
  for (const row of doubled)
    violations.push({
      invariant: 'once',
      imei: String(row.imei1),
      detail: `${row.kind} recorded ${row.n} times on ${row.day}`,
      rows: [row],
    });
  const shared = await sql<Record<string, unknown>>(
    `SELECT command_id, count(*)::int AS n FROM collection_actions
      WHERE imei1 = ANY($1::text[]) AND command_id IS NOT NULL GROUP BY command_id HAVING count(*) > 1`,
    [imeis],
  );
  for (const row of shared)
    violations.push({
      invariant: 'once',
      imei: '',
      detail: `command ${row.command_id} is the command of ${row.n} actions`,
      rows: [row],
    });
  return violations;
}

/** The command that replays a run: its seed, its number of steps and its stack. */
export function replayCommand(run: Pick<RunResult, 'seed' | 'steps' | 'stack' | 'planned'>): string {
  const plan = run.planned ? `CONVERGENCE_PLAN="${run.steps.map(describeStep).join(', ')}" ` : '';
  return `${plan}CONVERGENCE_SEED=${run.seed} CONVERGENCE_STEPS=${run.steps.length} CONVERGENCE_STACKS=${run.stack} CONVERGENCE_RUNS=1 npx vitest run --project server apps/server/test/convergence.test.ts`;
}

/** The failure message: the seed (and how to replay it), the steps, and each violation with its rows. */
export function explain(result: RunResult): string {
  return [
    `Convergence violated on ${result.stack}, seed ${result.seed} (replay: ${replayCommand(result)})`,
    `steps: ${result.steps.map(describeStep).join(', ')}`,
    ...(result.refused.length > 0 ? [`refused: ${result.refused.join('; ')}`] : []),
    `quiescent: ${result.quiescent}`,
    ...result.violations.map(
      (v) =>
        `- [${v.invariant}${v.cause ? `, cause: ${v.cause}` : ''}] ${v.imei}: ${v.detail}\n    ${v.rows.map((r) => JSON.stringify(r)).join('\n    ')}`,
    ),
  ].join('\n');
}
