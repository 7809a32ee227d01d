/** docs/performance.md, written by `npm run bench` from the figures of its run. */
import { type Figure, type Machine, markdownTable } from './report';

export interface RunRecord {
  figures: readonly Figure[];
  machine: Machine;
  /** The lines the benchmarks printed (setup, detail, CPU split). */
  log: readonly string[];
  minutes: number;
  date: Date;
}

const CODE = `## What the server does for these figures

Changes made for these benchmarks (the code, not the benchmarks, was made faster):

- **Device messages are applied in batches.** Acknowledgements, state reports and online/offline
  messages are queued and applied in one transaction of a few set-based statements per flush, however
  many it holds (\`CommandService\` in \`modules/commands/service.ts\`); before, each message was its own
  transaction. Devices that come online get their pending commands in one claim.
- **Batch chunks** take 1 % of the batch, between 50 and 500 rows (\`chunkSizeFor\`), still one
  transaction each. Commands for online devices are recorded SENT in the chunk and published after the
  commit; before, every chunk re-read all the commands of its batch to dispatch them, which made a
  100,000-row batch quadratic. Rows and commands are written from arrays (\`unnest\`). An upload is
  stored as chunks (one \`batch_chunks\` row per chunk, its rows in arrays); a chunk is claimed by
  locking its one row, and its rows enter \`batch_items\` once, with their results, in the statement that
  deletes the chunk: before, each row was inserted at upload, locked, then updated (three writes and three
  index entries per IMEI).
- **Single commands**: the device is locked by a primary-key probe; supersede, desired state, command
  and audit row are one statement; a command for an online device is sent without a claim query.
  Commands that arrive together are recorded together: while two transactions of single commands run,
  new ones wait, and the next transaction takes up to 200 of them (one lock, one record statement and one
  commit for all; each keeps its own outcome, audit row and acknowledgement). With 50 clients this took
  the figure from 874 commands/s (p99 93 ms) to about 1,900 (p99 47 ms).
- **Server-side prepared statements** on PostgreSQL (\`db/prepared.ts\`): every parameterised query is
  named by its text, so PostgreSQL parses it once per connection and reuses its plan; it had spent about
  half of its CPU on the single-command path parsing and planning. This alone: 874 → 1,156 commands/s.
- **Precompiled queries** (\`db/precompiled.ts\`) for what every request runs (the caller's session or
  key, and the device lookup): Kysely builds and compiles each once, and a call only binds its values;
  building and compiling had cost about 30 µs of the server's CPU per query.
- **Security headers** are computed once at start instead of for every answer (helmet directly; the
  console page alone gets a fresh style nonce), and request ids come from a counter: together about
  7 % of the server's CPU on small calls (1,921 → 2,539 commands/s).
- **The server runs as a bundle** (\`apps/server/dist/main.js\`, esbuild) rather than through the tsx
  loader: about 80 MB less memory at idle (218 → 136 MB). \`npm start\` (and so every benchmark's
  server) caps Node's old generation at 1 GB with 32 MB semi-spaces (\`config.node_options\` in
  \`apps/server/package.json\`): V8 then collects the export's garbage as it goes instead of letting it
  pile up, and a million-row export peaks near 210 MB instead of 265–310 MB, as fast as before.
- **The device channel** speaks MQTT 5 to an external broker, with the largest receive maximum:
  Mosquitto's default window for 3.1.1 clients (20 in flight, 1,000 queued) silently dropped device
  acknowledgements during a burst. What the gateway writes in one turn of the event loop leaves in one
  system call. mqtt.js's per-packet tracing through \`debug\` is off unless \`DEBUG\` is set (1.4 % of the
  server's CPU in a batch).
- **Priority that is real** (\`db/priority.ts\`): single and API commands (priority 2) and
  the server's reconcile commands (1) run as priority work, marked on their request and carried by
  the asynchronous context. On PostgreSQL they take a reserved pool of 4 connections (\`db/database.ts\`)
  instead of queueing for one of the main pool behind reads and batch chunks; the acknowledgement of a
  priority command is applied as priority work too (\`modules/channel/device-channel.ts\`). The gateway
  publishes through a window of 500 commands in flight with priority work ahead of batch work (every
  fourth slot still goes to batch work; a device's own commands keep their order), where a batch
  dispatch had written 50,000 commands into the socket at once, and the message carries its priority to
  the device (device-protocol.md §3).
- **Migration 0007**: homeData.php reads device counts kept by triggers instead of counting a million
  rows; the sweep finds its work through partial indexes instead of reading every pending command; device
  pages keep room for HOT updates.
- **The export** writes the sheet's XML itself into archiver's zip (\`lib/xlsx.ts\`, ADR 0006)
  instead of going through ExcelJS's per-cell objects: deflate (level 1) runs in zlib's thread pool
  beside the thread that reads the rows, with back-pressure from the response. A million rows: 19.8 s
  with ExcelJS in this session's first run, 10.4–12.4 s since, where ExcelJS alone takes 14.7–17 s. It
  reads the next page while it writes one, and lets PostgreSQL format the dates.`;

const SETUP = `## What each benchmark does

1. **Batch throughput.** A CSV of 100,000 IMEIs (90 % registered devices, 10 % unknown, shuffled) is
   uploaded to \`bulkLockCopy.php\` (multipart, as the console does). The clock runs from the upload until
   the database holds an EXECUTED command for every IMEI found, each one acknowledged by its device.
   - The 90,000 devices are online as multiplexed simulated agents (\`MultiplexedFleet\` in
     \`apps/device-sim/src/multiplex.ts\`): 4 MQTT connections instead of 90,000. Each device acts as
     \`SimulatedDevice\` does: it executes the command against its own state, acknowledges EXECUTED
     with that state (a LOCK executes at once: no DELIVERED before it, device-protocol.md §3), and never
     executes an id twice. The separate state
     report that \`SimulatedDevice\` also publishes after a command is left out: it repeats the state
     that the EXECUTED acknowledgement already carries.
   - Embedded: PGlite and the embedded broker (Aedes); the fleet uses the broker's load-test identity
     and subscribes to each device's \`cmd\` topic. PostgreSQL + Mosquitto: a fresh database, the server
     with \`DATABASE_URL\` and \`MQTT_URL=mqtt://127.0.0.1:1883\`; Mosquitto is anonymous, so the fleet
     connects as a normal client with MQTT 5 and a shared subscription to \`lendlock/d/+/cmd\`.
   - Beside it, on the same server and data: the spec's browser loop, one \`getimeidetails.php\` call per
     IMEI, one after another (plain JSON over a keep-alive connection: the loop at its fastest), timed on
     the first 2,000 IMEIs of the file and scaled to 100,000.
2. **Single commands.** 10,000 devices online (multiplexed as above) on PostgreSQL + Mosquitto. 50
   concurrent clients (autocannon) call \`locknotification.php\`, lock then unlock over the devices; every
   command is sent to its device and acknowledged while the load runs. Beside it, in the same run and on
   the same server: \`devicedetails.php\` with one IMEI, the bare lookup.
3. **Reads at scale.** A fresh PostgreSQL database bulk-loaded with \`generate_series\`: 1,000,000 devices
   (and their registrations, spread over 400 days) and 5,000,000 commands (secondary indexes built after
   the load, then \`VACUUM ANALYZE\`, as after a restore). Each call runs for 5 seconds from 1 client
   (the call's own latency, which the target is about) and then from 10 clients at once (shown beside
   it: on 2 cores that also run PostgreSQL and the client, mostly queueing); IMEIs are spread over the
   million devices. homeData.php reads device counts that triggers keep (migration 0007), not a count
   of a million rows.
4. **Export.** The 1,000,000 SETALARM commands of that database (the Activate Alarm report, every date)
   through \`GET /api/v2/reports/export\`, the server in its own process with its RSS sampled every 20 ms.
   Beside it, ExcelJS's streaming writer alone, in its own process, writing 1,000,000 rows of the same
   columns and cell types with the options the export used with it before ADR 0006 (ratio = ExcelJS
   alone / export).
5. **Fan-out.** On the server of benchmark 2: device action ALL (\`adminlocknotification.php\`, REBOOT, as
   SUPERADMIN) to the 10,000 connected devices, multiplexed over 4 connections, until every device's
   EXECUTED acknowledgement is in the database.
6. **Console.** \`apps/web\` built for production. The login route's JavaScript is the entry of
   \`dist/index.html\` with its static imports and what the entry loads at start-up (the app's bootstrap,
   which holds the router and the login page); the signed-in shell adds the lazily loaded layout chunk
   and its static imports. Sizes are gzip (level 6) of each file. Then the contract's CSV validator,
   built for the browser, validates a generated 1,000,000-row \`File\` in headless Chromium (the flags of
   \`e2e/support/chromium.ts\`); only the validation is timed, on the second run in the page.

Beside them, a release under load (\`bench/release.ts\`): 24 releases typed by an operator, one
every 400 ms, each to its own online simulated device (registered over HTTPS, its own MQTT connection),
while 50 clients read (homeData, devicedetails, auditReportByImei) and two 100,000-row batches run, on
PostgreSQL. Each release's clock runs from its request until the benchmark, polling the database
directly, sees it EXECUTED (sent, executed by the device, acknowledged, applied); the batches'
throughput is measured over the same seconds. \`BENCH_RELEASE_FLEET=online\` also puts the batches'
200,000 devices online (a multiplexed fleet), so that their commands and acknowledgements share the
broker, the publish queue and the device inbox with the releases.

For collections (\`bench/collections.ts\`): the daily run over 1,000,000 loans of 12 monthly
instalments (12,000,000 rows, 1 loan in 11 behind by up to 40 days) on 1,000,000 enrolled devices,
offline (their commands stay QUEUED), bulk-loaded in PostgreSQL. The policy's first day (Pre 3 days
before, Due, Post every 3 days, lock after 5 days overdue), so every loan past the grace period is locked
at once: the heaviest day. The engine's own code runs in the benchmark process, chunk by chunk through
the one command pipeline, from the run's start to DONE.

Every server runs as its own process, as \`npm start\` runs it (\`node\` with \`config.node_options\` of
\`apps/server/package.json\` and \`apps/server/dist/main.js\`, \`LOG_LEVEL=warn\`,
default settings otherwise), so the clients and simulated devices never share its event loop. The
lines "CPU: …" below split the CPU time of each measurement between the server, PostgreSQL, Mosquitto,
the benchmark process (clients and simulated devices) and anything else on the machine.`;

const HOW = `## How to run

\`\`\`
npm run bench                      # every benchmark, the table, and this file rewritten
npm run bench -- batch commands    # only some (batch, commands, scale, console, release, collections); this file is kept
npm run build && node --import tsx bench/batch.ts postgres   # one on its own (bench/README.md)
\`\`\`

It needs PostgreSQL at \`BENCH_DATABASE_URL\` (default \`postgres://postgres@127.0.0.1:5432/test\`; a user
that may create databases), Mosquitto at \`BENCH_MQTT_URL\` (default \`mqtt://127.0.0.1:1883\`, anonymous)
and Chromium at \`CHROMIUM_PATH\` (default \`/usr/bin/chromium\`). Each benchmark creates its own
databases and drops them afterwards. Before each measurement it waits (up to a minute) for the machine
to be quiet, so that other work is not measured as ours; a measurement during which other work still
took more than a quarter of a core is taken again, once, and the less disturbed run is kept. \`bench\`
is not part of \`npm test\`.`;

export function performanceDocument(run: RunRecord): string {
  const m = run.machine;
  const held = run.figures.filter((f) => f.holds === true).length;
  const targets = run.figures.filter((f) => f.holds !== undefined).length;
  const misses = run.figures.filter((f) => f.holds === false);
  const missText =
    misses.length === 0
      ? 'Every target holds in this run.'
      : misses.map((f) => `- **${f.bench}** (${f.what}): ${f.note ?? 'missed.'}`).join('\n');
  const remarks = run.figures.filter((f) => f.holds !== false && f.note);
  return `# Performance

Measured by \`npm run bench\` (\`bench/\`): every benchmark once, side by side, in one run on one machine.
Figures are from the run below; they move by some percent from run to run on a shared 2-core machine.

- **Date:** ${run.date.toISOString().replace('T', ' ').slice(0, 16)} UTC
- **Machine:** ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM.
  - Node ${m.node}, PostgreSQL ${m.postgres}, Mosquitto ${m.mosquitto}, ${m.chromium}.
  - Everything runs on these ${m.cores} cores: PostgreSQL, Mosquitto, the server, the simulated devices,
    the clients and Chromium.
- **Run time:** ${run.minutes.toFixed(1)} minutes.
- **Targets:** ${held} of ${targets} hold.
- **Investigations** (comparisons of builds, the release under load, the soak): [performance-investigations.md](performance-investigations.md).

## Results

${markdownTable(run.figures)}

## Targets missed: by how much and why

${missText}
${remarks.length > 0 ? `\n## Remarks\n\n${remarks.map((f) => `- **${f.bench}** (${f.what}): ${f.note}`).join('\n')}\n` : ''}
${CODE}

${SETUP}

${HOW}

## The run's log

\`\`\`
${run.log.join('\n')}
\`\`\`
`;
}
