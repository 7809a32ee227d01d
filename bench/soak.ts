/**
 * The soak: the demo server as `npm start` runs it (the built `apps/server/dist/main.js`
 * with the Node options of apps/server/package.json, embedded PGlite and the embedded MQTT broker, demo
 * data on: the 300-device demo fleet in its own process, churning online and offline) in a fresh
 * DATA_DIR, for SOAK_MINUTES (30), while an operator sends a lock or an unlock to a random demo device
 * every SOAK_COMMAND_SECONDS (2 s). The server's resident memory (VmRSS of /proc/<pid>/status) is
 * sampled every 10 s; the figure is its growth from the 5th minute to the end (the median of the minute
 * after minute 5 against the median of the last minute). Target: at most 10 %.
 *
 *   node --import tsx bench/soak.ts          (SOAK_MINUTES=6 for a quick look; needs `npm run build`)
 *
 * The samples go to a CSV in /tmp (seconds, rss_mb, commands sent), named on the last line.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imeiFor } from '@lendlock/device-sim';
import { freePort } from '@lendlock/testkit';
import { type Figure, fmt } from './lib/report';
import { Api, onInterrupt, startServerProcess } from './lib/server';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const COMMAND_SECONDS = Number(process.env.SOAK_COMMAND_SECONDS ?? 2);
const SAMPLE_SECONDS = 10;
/** Growth is measured from here (the first minutes are warm-up: JIT, caches, the fleet connecting). */
const BASELINE_MINUTES = 5;
const TARGET_GROWTH_PERCENT = 10;
/** The demo fleet's seed and size (apps/server/src/demo.ts, DEMO_DEVICES). */
const DEMO_SEED = 7;
const DEMO_DEVICES = 300;

interface Sample {
  seconds: number;
  rss: number;
  commands: number;
}

export async function soakBenchmark(log: (line: string) => void): Promise<Figure[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-soak-'));
  const csv = join(tmpdir(), `lendlock-soak-${new Date().toISOString().replace(/[:.]/g, '-')}.csv`);
  const forget = onInterrupt(async () => rmSync(dataDir, { recursive: true, force: true }));
  log(`Soak: the demo server for ${MINUTES} min (RSS every ${SAMPLE_SECONDS} s, samples in ${csv})`);
  const server = await startServerProcess({
    DATA_DIR: dataDir,
    DEMO_DATA: 'on',
    DEMO_DEVICES: String(DEMO_DEVICES),
    MQTT_PORT: String(await freePort()),
    // As `npm start`: every device speaks with its own credential on the embedded broker.
    MQTT_ALLOW_ANONYMOUS: 'off',
  });
  const samples: Sample[] = [];
  let commands = 0;
  let refused = 0;
  const writeCsv = () =>
    writeFileSync(
      csv,
      `seconds,rss_mb,commands\n${samples.map((s) => `${s.seconds},${(s.rss / 1024 / 1024).toFixed(1)},${s.commands}`).join('\n')}\n`,
    );
  try {
    log(`  server ${server.pid} at ${server.url}; demo fleet of ${DEMO_DEVICES} running`);
    const api = await Api.login(server.url);
    const started = Date.now();
    const end = started + MINUTES * 60_000;
    const imeis = Array.from({ length: DEMO_DEVICES }, (_, i) => imeiFor(DEMO_SEED, i * 2));
    const operator = setInterval(() => {
      const imei = imeis[Math.floor(Math.random() * imeis.length)];
      api.post('/api/locknotification.php', { imei, action: commands % 2 === 0 ? 'lock' : 'unlock' }).then(
        () => commands++,
        // A released or de-enrolled demo device refuses commands: the operator moves on.
        () => refused++,
      );
    }, COMMAND_SECONDS * 1000);
    const sample = () => {
      samples.push({ seconds: Math.round((Date.now() - started) / 1000), rss: server.rss(), commands });
      writeCsv();
    };
    sample();
    while (Date.now() < end) {
      await new Promise((done) => setTimeout(done, Math.min(SAMPLE_SECONDS * 1000, end - Date.now())));
      if (server.child.exitCode !== null) throw new Error(`the server exited:\n${server.output()}`);
      sample();
      const last = samples.at(-1) as Sample;
      if (last.seconds % 60 < SAMPLE_SECONDS)
        log(`  ${Math.round(last.seconds / 60)} min: RSS ${fmt.mb(last.rss)}, ${commands} commands sent`);
    }
    clearInterval(operator);
  } finally {
    await server.stop();
    forget();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const baseline = samples.find((s) => s.seconds >= BASELINE_MINUTES * 60) ?? samples[0];
  const last = samples.at(-1);
  if (!baseline || !last) throw new Error('no RSS sample');
  // One sample sits anywhere on the garbage collector's saw-tooth (tens of MB): the figure compares the
  // median of the minute after BASELINE_MINUTES with the median of the last minute.
  const early = median(
    samples.filter((s) => s.seconds >= baseline.seconds && s.seconds < baseline.seconds + 60),
  );
  const late = median(samples.filter((s) => s.seconds > last.seconds - 60));
  const growth = ((late - early) / early) * 100;
  const pointGrowth = ((last.rss - baseline.rss) / baseline.rss) * 100;
  const peak = Math.max(...samples.map((s) => s.rss));
  const holds = growth <= TARGET_GROWTH_PERCENT;
  log(
    `  RSS at ${fmt.num(baseline.seconds / 60)} min: ${fmt.mb(baseline.rss)} (median of that minute ${fmt.mb(early)})`,
  );
  log(
    `  RSS at the end (${fmt.num(last.seconds / 60)} min): ${fmt.mb(last.rss)} (median of the last minute ${fmt.mb(late)}; peak ${fmt.mb(peak)})`,
  );
  log(
    `  growth after the first ${BASELINE_MINUTES} min: ${growth.toFixed(1)} % (minute medians; ${pointGrowth.toFixed(1)} % sample to sample) (target: no more than ${TARGET_GROWTH_PERCENT} %): ${holds ? 'PASS' : 'MISS'}`,
  );
  log(`  ${commands} commands sent, ${refused} refused; samples in ${csv}`);
  return [
    {
      bench: 'Soak',
      what: `demo server (300-device fleet, a command every ${COMMAND_SECONDS} s), ${MINUTES} min`,
      value: `${growth.toFixed(1)} % RSS growth`,
      beside: `${fmt.mb(early)} at ${BASELINE_MINUTES} min → ${fmt.mb(late)} at ${MINUTES} min (minute medians); peak ${fmt.mb(peak)}`,
      target: `≤ ${TARGET_GROWTH_PERCENT} % after ${BASELINE_MINUTES} min`,
      holds,
      ...(holds ? {} : { note: `${(growth - TARGET_GROWTH_PERCENT).toFixed(1)} points over` }),
    },
  ];
}

function median(window: readonly Sample[]): number {
  const sorted = window.map((s) => s.rss).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  soakBenchmark((line) => console.log(line)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
