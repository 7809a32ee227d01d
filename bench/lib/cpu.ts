/**
 * Where the CPU went during a measurement: CPU seconds of the server process, PostgreSQL (all its
 * processes), Mosquitto, this benchmark process (clients and simulated devices), and everything else on
 * the machine (from /proc; Linux only).
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU ticks of a process (user and system); with `reaped`, also those of its children that have exited
 * and been waited for. PostgreSQL's backends come and go during a measurement (a pool closes an idle
 * connection and opens another): the ticks of one that ended move to the postmaster's children's
 * count, and without them its CPU would vanish from the sum (a negative PostgreSQL figure, counted as
 * other work on the machine).
 */
function processTicks(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return reaped ? own + Number(fields[13]) + Number(fields[14]) : own;
  } catch {
    return 0;
  }
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function totalTicks(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.split(/\s+/).slice(1).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait
  return cpu.slice(0, 8).reduce((sum, n, i) => (i === 3 || i === 4 ? sum : sum + n), 0);
}

export interface CpuSnapshot {
  at: number;
  server: number;
  postgres: number;
  mosquitto: number;
  bench: number;
  busy: number;
}

export function cpuSnapshot(serverPid: number | null): CpuSnapshot {
  let postgres = 0;
  let mosquitto = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const comm = commOf(pid);
    if (comm === 'postgres') postgres += processTicks(pid, true);
    else if (comm === 'mosquitto') mosquitto += processTicks(pid, true);
  }
  return {
    at: performance.now(),
    server: serverPid ? processTicks(serverPid) : 0,
    postgres,
    mosquitto,
    bench: processTicks(process.pid),
    busy: totalTicks(),
  };
}

export interface CpuSplit {
  /** Seconds of wall time, and CPU seconds of each part. */
  wall: number;
  server: number;
  postgres: number;
  mosquitto: number;
  bench: number;
  other: number;
  /** Average cores busy over the wall time (all parts). */
  cores: number;
}

export function cpuSplit(before: CpuSnapshot, after: CpuSnapshot): CpuSplit {
  const s = (ticks: number) => ticks / TICKS_PER_SECOND;
  const server = s(after.server - before.server);
  const postgres = s(after.postgres - before.postgres);
  const mosquitto = s(after.mosquitto - before.mosquitto);
  const bench = s(after.bench - before.bench);
  const busy = s(after.busy - before.busy);
  const other = Math.max(0, busy - server - postgres - mosquitto - bench);
  const wall = (after.at - before.at) / 1000;
  return { wall, server, postgres, mosquitto, bench, other, cores: busy / wall };
}

/** CPU seconds per part, as "server 9.1 s · PostgreSQL 4.2 s · …". */
export function describeCpu(c: CpuSplit): string {
  const s = (seconds: number) => `${seconds.toFixed(1)} s`;
  return [
    `wall ${c.wall.toFixed(1)} s`,
    `server ${s(c.server)}`,
    `PostgreSQL ${s(c.postgres)}`,
    ...(c.mosquitto > 0.05 ? [`Mosquitto ${s(c.mosquitto)}`] : []),
    `bench+devices ${s(c.bench)}`,
    `other ${s(c.other)}`,
    `(${c.cores.toFixed(2)} cores busy)`,
  ].join(' · ');
}

/**
 * Waits (up to `maxSeconds`) until the machine is quiet: less than a third of a core busy over two
 * seconds, while this benchmark itself does nothing. Other work on a 2-core machine (a test run, a
 * browser) would otherwise be measured as ours. Says so when it waited or gave up.
 */
export async function waitForQuiet(log: (line: string) => void, maxSeconds = 60): Promise<void> {
  const started = Date.now();
  for (;;) {
    const before = cpuSnapshot(null);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const after = cpuSnapshot(null);
    const cores = (after.busy - before.busy - (after.bench - before.bench)) / TICKS_PER_SECOND / 2;
    if (cores < 0.33) {
      if (Date.now() - started > 3000)
        log(`  (waited ${Math.round((Date.now() - started) / 1000)} s for other work on the machine to end)`);
      return;
    }
    if (Date.now() - started > maxSeconds * 1000) {
      log(`  (the machine is busy with other work: ${cores.toFixed(2)} cores; measuring anyway)`);
      return;
    }
  }
}
