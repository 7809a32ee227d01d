/**
 * One implementation records every command (commands/issue.ts). A property test: a random sequence that
 * interleaves single commands, batches (run chunk by chunk by the batch worker, several chunks each, with
 * repeated and unknown IMEIs) and device action ALL (a batch without a file), to a few devices online and
 * offline, with the broker going down and up between them, leaves exactly the command rows (command,
 * options, status, in order), desired states and deliveries (what the gateway was asked to publish, per
 * device, in order) that the same commands leave when issued one by one as single commands.
 *
 * Two worlds in one database, each its own retailer (so ALL reaches only its own devices) and its own
 * fake gateway: one runs the sequence through each path, the other one command at a time.
 */
import { randomInt } from 'node:crypto';
import type { CommandOptions, RawCommand } from '@lendlock/contract';
import { imeiFor } from '@lendlock/device-sim';
import fc from 'fast-check';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../src/core/principal';
import { BatchService } from '../src/modules/batches/service';
import { BatchWorker } from '../src/modules/batches/worker';
import type { Gateway } from '../src/modules/channel/gateway';
import { CommandService } from '../src/modules/commands/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildUser } from './factories';

const DEVICES = 3;
/** Index DEVICES names an IMEI nobody registered. */
const SLOTS = DEVICES + 1;

const COMMANDS: readonly { command: RawCommand; options?: CommandOptions }[] = [
  { command: 'LOCK' },
  { command: 'UNLOCK' },
  { command: 'BLOCKAPP' },
  { command: 'UNBLOCKAPP' },
  { command: 'GREYAPP', options: { level: 'level2' } },
  { command: 'REBOOT' },
  { command: 'RELEASE' },
];

type Op =
  | { kind: 'single'; slot: number; c: number }
  | { kind: 'batch'; slots: number[]; c: number }
  | { kind: 'all'; c: number }
  | { kind: 'broker'; up: boolean };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('single' as const),
      slot: fc.nat(SLOTS - 1),
      c: fc.nat(COMMANDS.length - 1),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      slots: fc.array(fc.nat(SLOTS - 1), { minLength: 1, maxLength: 6 }),
      c: fc.nat(COMMANDS.length - 1),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('all' as const), c: fc.nat(COMMANDS.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('broker' as const), up: fc.boolean() }) },
);

const silent = {
  level: 'silent',
  fatal() {},
  error() {},
  warn() {},
  info() {},
  debug() {},
  trace() {},
  silent() {},
  child() {
    return silent;
  },
} as unknown as FastifyBaseLogger;

/** A gateway that records what it was asked to publish, per device, and can be down. */
class FakeGateway implements Gateway {
  connected = true;
  readonly published = new Map<string, string[]>();
  async publish(imei: string, message: { command: string; options?: CommandOptions }): Promise<void> {
    if (!this.connected) throw new Error('broker not connected');
    const list = this.published.get(imei) ?? [];
    list.push(`${message.command} ${JSON.stringify(message.options ?? {})}`);
    this.published.set(imei, list);
  }
  priorityOf(): number | undefined {
    return undefined;
  }
  async close(): Promise<void> {}
}

interface World {
  imeis: string[];
  gateway: FakeGateway;
  commands: CommandService;
  batches: BatchService;
  worker: BatchWorker;
  actor: Principal;
}

describe.each(databaseKinds())('one command pipeline on %s (property)', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  const world = async (online: readonly boolean[]): Promise<World> => {
    const phone = `8${String(randomInt(1e9)).padStart(9, '0')}`;
    // A retailer's SUPERADMIN: device action ALL is SUPERADMIN's (authz/resources/batches.ts).
    const user = await buildUser(database, { userlevel: 'SUPERADMIN', retailerPhone: phone });
    const seed = randomInt(1000);
    const base = randomInt(100_000_000) * 10;
    // Sorted: device action ALL reaches devices in imei1 order, so slot i is the i-th device of both worlds.
    const imeis = Array.from({ length: SLOTS }, (_, i) => imeiFor(seed, base + i)).sort();
    await database.db
      .insertInto('devices')
      .values(
        imeis.slice(0, DEVICES).map((imei1, i) => ({
          imei1,
          imei2: null,
          match_status: 'YES' as const,
          retailer_phone: phone,
          online: online[i] ?? false,
        })),
      )
      .execute();
    const gateway = new FakeGateway();
    const commands = new CommandService({
      db: database.db,
      log: silent,
      oneShotTtlMs: 3_600_000,
      resendAfterMs: 3_600_000,
    });
    commands.attach(gateway);
    // Chunks of two rows: a batch runs in several chunks; no workers, the test steps it.
    const worker = new BatchWorker({ db: database.db, commands, log: silent, oneShotTtlMs: 3_600_000 });
    const batches = new BatchService({ db: database.db, chunkSize: 2 });
    const actor: Principal = {
      credential: 'session',
      userId: user.id,
      email: user.email,
      userlevel: 'SUPERADMIN',
      permissions: new Set(),
      retailerPhone: phone,
    };
    return { imeis, gateway, commands, batches, worker, actor };
  };

  const runBatch = async (w: World) => {
    while (await w.worker.step()) await w.commands.drain();
    await w.commands.drain();
  };

  /** The sequence through each path: single, batch chunks, ALL. */
  const throughEachPath = async (w: World, ops: readonly Op[]) => {
    for (const op of ops) {
      if (op.kind === 'broker') {
        w.gateway.connected = op.up;
        if (op.up) await w.commands.dispatchMany(w.imeis);
      } else if (op.kind === 'single') {
        const { command, options } = COMMANDS[op.c] as (typeof COMMANDS)[number];
        await w.commands
          .issue({
            imei: w.imeis[op.slot] as string,
            command,
            options,
            iface: 'S',
            actor: w.actor,
            priority: 2,
          })
          .catch(() => undefined);
      } else if (op.kind === 'batch') {
        const { command, options } = COMMANDS[op.c] as (typeof COMMANDS)[number];
        const rows = op.slots.map((slot) => ({ imei: w.imeis[slot] as string }));
        await w.batches.create(
          {
            feature: 'test',
            command,
            options: options ?? {},
            fileName: 'devices.csv',
            storedFile: null,
            iface: 'B',
            actor: w.actor,
            address: '127.0.0.1',
            total: rows.length,
            invalid: 0,
          },
          [rows],
        );
        await runBatch(w);
      } else {
        const { command, options } = COMMANDS[op.c] as (typeof COMMANDS)[number];
        await w.batches.issueToAll({ command, options, actor: w.actor });
        await runBatch(w);
      }
      await w.commands.drain();
    }
  };

  /** The same commands, one single command at a time. */
  const oneByOne = async (w: World, ops: readonly Op[]) => {
    const single = async (slot: number, c: number) => {
      const { command, options } = COMMANDS[c] as (typeof COMMANDS)[number];
      await w.commands
        .issue({ imei: w.imeis[slot] as string, command, options, iface: 'S', actor: w.actor, priority: 2 })
        .catch(() => undefined);
      await w.commands.drain();
    };
    for (const op of ops) {
      if (op.kind === 'broker') {
        w.gateway.connected = op.up;
        if (op.up) await w.commands.dispatchMany(w.imeis);
      } else if (op.kind === 'single') await single(op.slot, op.c);
      else if (op.kind === 'batch') for (const slot of op.slots) await single(slot, op.c);
      else {
        // ALL: every device of the retailer enrolled and not released, at the time, in imei1 order.
        const reached = await database.db
          .selectFrom('devices')
          .select('imei1')
          .where('imei1', 'in', w.imeis)
          .where('claimstatus', '=', 'ENROLLED')
          .where(sql<boolean>`coalesce((desired_state->>'released')::boolean, false) = false`)
          .orderBy('imei1')
          .execute();
        for (const { imei1 } of reached) await single(w.imeis.indexOf(imei1), op.c);
      }
      await w.commands.drain();
    }
  };

  /** What a world ended with, by slot. */
  const outcome = async (w: World) => {
    const rows = await database.db
      .selectFrom('commands')
      .select(['imei1', 'command', 'options', 'status'])
      .where('imei1', 'in', w.imeis)
      .orderBy('id')
      .execute();
    const devices = await database.db
      .selectFrom('devices')
      .select(['imei1', 'desired_state', 'claimstatus', 'last_command'])
      .where('imei1', 'in', w.imeis)
      .execute();
    return w.imeis.map((imei, slot) => ({
      slot,
      commands: rows
        .filter((r) => r.imei1 === imei)
        .map((r) => `${r.command} ${JSON.stringify(r.options ?? {})} ${r.status}`),
      device: (() => {
        const d = devices.find((x) => x.imei1 === imei);
        return d ? { desired: d.desired_state, claimstatus: d.claimstatus, last: d.last_command } : null;
      })(),
      delivered: w.gateway.published.get(imei) ?? [],
    }));
  };

  it('single, batch and ALL commands, interleaved, end as the same commands issued one by one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: DEVICES, maxLength: DEVICES }),
        fc.array(opArb, { minLength: 1, maxLength: 8 }),
        async (online, ops) => {
          const mixed = await world(online);
          const single = await world(online);
          await throughEachPath(mixed, ops);
          await oneByOne(single, ops);
          expect(await outcome(mixed)).toEqual(await outcome(single));
        },
      ),
      { numRuns: 25 },
    );
  }, 600_000);
});
