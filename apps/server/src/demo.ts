/**
 * The demo of design.md §6: on the embedded database, a simulated fleet runs in-process so every screen
 * has real data and every command gets a real acknowledgement. On the first start (empty database) it also
 * lays down a few weeks of history — registrations, de-enrollments, releases, commands of every kind —
 * through the same services the console uses, then spreads their dates over the past weeks.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RAW_COMMANDS, type RawCommand } from '@lendlock/contract';
import { Fleet, rng } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { Principal } from './core/principal';
import { DEENROLLED_RESULT, importFinanced } from './modules/devices/repository';
import { rotateDemoSecret } from './modules/enrollment/service';
import { STEP_DAYS as LOAN_STEP_DAYS, seedDemoLoans } from './modules/loans/demo';

export interface Demo {
  fleet: Fleet;
  /** The enrollment secret the fleet registers with (ENROLLMENT_SECRET, or this start's `demo` secret). */
  enrollmentSecret: string;
  stop(): Promise<void>;
}

const HISTORY_DAYS = 21;

export function demoCredentialsFile(dataDir: string): string {
  return join(dataDir, 'demo-fleet.json');
}

export async function startDemo(
  app: FastifyInstance,
  options: { url: string; dataDir: string; devices: number; seedHistory: boolean },
): Promise<Demo | null> {
  const credentialsFile = demoCredentialsFile(options.dataDir);
  if (!options.seedHistory && !existsSync(credentialsFile)) return null;
  const { ctx } = app;
  const enrollmentSecret = ctx.config.enrollmentSecret ?? (await rotateDemoSecret(ctx.db));
  const fleet = new Fleet({
    server: options.url,
    enrollmentSecret,
    devices: options.devices,
    offlineRate: 0.1,
    failRate: 0.02,
    seed: 7,
    mqttUrl: ctx.deviceMqttUrl,
    credentialsFile,
    churnSeconds: 4,
  });
  if (options.seedHistory) {
    // Most phones of the demo are financed ones: they register as Match_Status YES.
    const financed = fleet.devices.filter((_, i) => i % 7 !== 0).map((d) => d.imei);
    await importFinanced(ctx.db, financed, 'demo');
  }
  await fleet.start();
  if (options.seedHistory) {
    try {
      await seedHistory(app, fleet);
    } catch (error) {
      // The demo's history is a nicety: never let it stop the server.
      app.log.warn({ err: error }, 'demo history incomplete');
    }
  }
  app.log.info({ devices: options.devices }, 'demo fleet running');
  return { fleet, enrollmentSecret, stop: () => fleet.stop() };
}

async function seedHistory(app: FastifyInstance, fleet: Fleet): Promise<void> {
  const { db, commands } = app.ctx;
  const random = rng(11);
  const users = await db.selectFrom('users').select(['id', 'email', 'userlevel', 'retailer_phone']).execute();
  const actors: Principal[] = users.map((u) => ({
    credential: 'session',
    userId: u.id,
    email: u.email,
    userlevel: u.userlevel,
    permissions: new Set(),
    retailerPhone: null,
  }));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const ordinary = RAW_COMMANDS.filter(
    (c) => !['RELEASE', 'FORMATTEDDEVICE', 'REBOOT', 'UPDATE'].includes(c),
  );

  const online = fleet.devices.filter((d) => d.online);
  // Commands of every kind, through the command service, acknowledged by the devices.
  for (const device of online) {
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++) {
      const command = pick(ordinary) as RawCommand;
      const options =
        command === 'GREYAPP'
          ? { level: pick(['level1', 'level2'] as const) }
          : command === 'NOTIFY'
            ? {
                caseType: pick(['Pre', 'Due', 'Post'] as const),
                message: 'Your EMI is due. Please pay to keep using your phone.',
              }
            : {};
      await commands.issue({
        imei: device.imei,
        command,
        options,
        iface: pick(['S', 'S', 'B', 'A'] as const),
        actor: pick(actors),
      });
    }
  }
  const superadmin = actors.find((a) => a.userlevel === 'SUPERADMIN') ?? actors[0] ?? null;
  for (const device of online.slice(0, 4)) {
    await commands.issue({
      imei: device.imei,
      command: pick(['REBOOT', 'UPDATE'] as const),
      iface: 'S',
      actor: superadmin,
    });
  }
  // A few paid-off phones released, a few formatted phones de-enrolled (half of them back again): disjoint sets.
  // At least two formatted phones: one comes back, one stays de-enrolled.
  const share = Math.max(2, Math.floor(online.length * 0.03));
  const released = online.slice(online.length - share);
  const formatted = online.slice(online.length - 2 * share, online.length - share);
  for (const device of released) {
    await commands.issue({ imei: device.imei, command: 'RELEASE', iface: 'S', actor: pick(actors) });
  }
  for (const device of formatted) {
    await device.dropOffline();
    await commands.issue({ imei: device.imei, command: 'FORMATTEDDEVICE', iface: 'S', actor: pick(actors) });
  }
  for (const device of formatted.slice(0, Math.ceil(formatted.length / 2))) {
    await device.register();
    await device.connect();
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await commands.drain();

  // Loans and their payments, on the embedded demo only (never on PostgreSQL): modules/loans/demo.ts.
  // Before the history is spread: a phone with a loan was registered when its loan began.
  if (app.ctx.database.kind === 'pglite' && superadmin)
    await seedDemoLoans(
      app.ctx.loans,
      db,
      fleet.devices.map((d) => d.imei),
      superadmin,
    );
  await spreadHistory(app);
}

/**
 * Spreads the history over the past weeks, in the order things happen on each device (issues 17.7 and
 * 25.10): its first registration, then its commands in the order they were issued (a superseded one
 * settled when the next on its key was issued); a Formatted Device command is its de-enrollment, at the
 * same moment, and settles the commands it cancelled then; a release is recorded when its Release
 * command is executed. A device de-enrolled then registered again gets its re-registration (both
 * records) after the de-enrollment, and the commands issued after it (the reconcile's) after that; one
 * still de-enrolled was last seen when it was de-enrolled. Each device gets a timeline (`registered` →
 * `ends`, the de-enrollment or about the release); its rows are placed on it.
 */
async function spreadHistory(app: FastifyInstance): Promise<void> {
  // One transaction: the timeline is a temporary table of its connection, dropped at its end.
  await app.ctx.db.transaction().execute(async (db) => {
    // A device registered in the past weeks, or when its loan began (a step before its first instalment
    // fell due). A de-enrolled or released device's story ends at 70 % of the way from its registration
    // to now.
    await sql`CREATE TEMP TABLE demo_timeline ON COMMIT DROP AS
    SELECT imei1, registered,
      CASE WHEN ended THEN registered + (now() - registered) * 0.7 ELSE now() - interval '10 minutes' END AS ends
    FROM (
      SELECT d.imei1,
        coalesce(
          (SELECT ((min(i.due_date) - ${LOAN_STEP_DAYS}::int) + time '09:00')::timestamptz
            FROM loans l JOIN loan_instalments i ON i.loan_id = l.id WHERE l.imei = d.imei1),
          now() - (${HISTORY_DAYS} * interval '1 day') * (0.15 + 0.85 * random())) AS registered,
        EXISTS (SELECT 1 FROM deenrollments e WHERE e.imei1 = d.imei1)
          OR EXISTS (SELECT 1 FROM releases r WHERE r.imei1 = d.imei1) AS ended
      FROM devices d
    ) t`.execute(db);
    // The first registration opens the timeline; a re-registration comes after its end, before now.
    await sql`UPDATE registrations g SET created_at = CASE WHEN o.rn = 1 THEN t.registered
        ELSE t.ends + (now() - t.ends) * (o.rn - 1)::float / o.n END
      FROM (SELECT id, imei1, row_number() OVER (PARTITION BY imei1 ORDER BY id) AS rn,
              count(*) OVER (PARTITION BY imei1) AS n FROM registrations) o
      JOIN demo_timeline t ON t.imei1 = o.imei1
      WHERE g.id = o.id`.execute(db);
    await sql`UPDATE devices d SET created_at = r.first, registered_at = r.last
      FROM (SELECT imei1, min(created_at) AS first, max(created_at) AS last FROM registrations GROUP BY imei1) r
      WHERE r.imei1 = d.imei1`.execute(db);
    // Commands in issue order, on the stretch of the timeline they were issued in: before the device's
    // Formatted Device command, between its registration and its end, the Formatted Device command at
    // the end itself; after it, between the registration that followed and now. Their later times
    // follow them, but the commands the de-enrollment cancelled: settled at its moment.
    await sql`UPDATE commands c SET
        created_at = o.at,
        sent_at = CASE WHEN c.sent_at IS NULL THEN NULL ELSE o.at + interval '1 second' END,
        delivered_at = CASE WHEN c.delivered_at IS NULL THEN NULL ELSE o.at + interval '2 seconds' END,
        completed_at = CASE WHEN c.completed_at IS NULL THEN NULL
          WHEN c.command = 'FORMATTEDDEVICE' THEN o.at
          WHEN c.status = 'CANCELLED' AND c.result = ${DEENROLLED_RESULT} THEN o.ends
          ELSE o.at + interval '3 seconds' END,
        expires_at = c.expires_at + (o.at - c.created_at)
      FROM (SELECT s.id, s.ends,
              CASE WHEN s.formatted THEN s.ends
                ELSE s.starts + (s.ends - s.starts)
                  * (row_number() OVER (PARTITION BY s.imei1, s.stretch, s.formatted ORDER BY s.id))::float
                  / (count(*) OVER (PARTITION BY s.imei1, s.stretch, s.formatted) + 1) END AS at
            FROM (SELECT c2.id, c2.imei1, c2.command = 'FORMATTEDDEVICE' AS formatted, p.stretch,
                    CASE WHEN p.stretch = 0 THEN t.registered
                      ELSE (SELECT g.created_at FROM registrations g WHERE g.imei1 = c2.imei1
                            ORDER BY g.id OFFSET p.stretch LIMIT 1) END AS starts,
                    CASE WHEN p.stretch = 0 THEN t.ends ELSE now() - interval '10 minutes' END AS ends
                  FROM commands c2
                  JOIN demo_timeline t ON t.imei1 = c2.imei1
                  CROSS JOIN LATERAL (SELECT count(*)::int AS stretch FROM commands f
                    WHERE f.imei1 = c2.imei1 AND f.command = 'FORMATTEDDEVICE' AND f.id < c2.id) p) s) o
      WHERE c.id = o.id`.execute(db);
    // A superseded command was settled when the next command on its key was issued.
    await sql`UPDATE commands c SET completed_at = (SELECT n.created_at FROM commands n
        WHERE n.imei1 = c.imei1 AND n.state_key = c.state_key AND n.id > c.id ORDER BY n.id LIMIT 1)
      WHERE c.status = 'SUPERSEDED'`.execute(db);
    await sql`UPDATE devices d SET last_command_at = m.last
      FROM (SELECT imei1, max(created_at) AS last FROM commands GROUP BY imei1) m
      WHERE m.imei1 = d.imei1 AND d.last_command_at IS NOT NULL`.execute(db);
    // Who decided each key of the desired state decided it when its latest standing command was issued:
    // an operator's unlock of the demo's history is weeks old, not of today (collections reads the day).
    await sql`UPDATE devices d SET desired_cause = s.causes
      FROM (SELECT d2.imei1, jsonb_object_agg(e.key, CASE WHEN c.at IS NULL THEN e.value
                ELSE jsonb_set(e.value, '{at}', to_jsonb(c.at)) END) AS causes
            FROM devices d2
            CROSS JOIN LATERAL jsonb_each(d2.desired_cause) e
            LEFT JOIN LATERAL (SELECT max(c2.created_at) AS at FROM commands c2
              WHERE c2.imei1 = d2.imei1 AND c2.state_key = e.key
                AND c2.status IN ('QUEUED', 'SENT', 'DELIVERED', 'EXECUTED')) c ON true
            GROUP BY d2.imei1) s
      WHERE s.imei1 = d.imei1`.execute(db);
    // The de-enrollment ends the timeline (its Formatted Device command is there); its re-registration
    // record is the registration that followed. A release is recorded when its Release command executed.
    await sql`UPDATE deenrollments e SET created_at = CASE WHEN e.action = 'DEENROLLED' THEN t.ends
        ELSE (SELECT g.created_at FROM registrations g WHERE g.imei1 = e.imei1 ORDER BY g.id OFFSET 1 LIMIT 1) END
      FROM demo_timeline t WHERE t.imei1 = e.imei1`.execute(db);
    await sql`UPDATE releases r SET created_at = c.completed_at
      FROM commands c WHERE c.transaction_id = r.transaction_id AND c.completed_at IS NOT NULL`.execute(db);
    // A formatted phone was last seen, and went offline, when it was de-enrolled.
    await sql`UPDATE devices d SET offline_since = t.ends,
        last_seen_at = CASE WHEN d.last_seen_at IS NULL THEN NULL ELSE t.ends END
      FROM demo_timeline t WHERE t.imei1 = d.imei1 AND d.claimstatus = 'DEENROLLED'`.execute(db);
  });
}
