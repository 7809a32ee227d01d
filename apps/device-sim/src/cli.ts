/**
 * `npm run sim -- --server URL --devices N [--offline R] [--fail R] [--seed S] [--secret S]`
 * Registers N simulated agents with the server, keeps their MQTT sessions, executes and acknowledges
 * commands, and prints a live summary. The enrollment secret comes from --secret or ENROLLMENT_SECRET.
 */
import { parseArgs } from 'node:util';
import { Fleet } from './fleet';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'http://localhost:8080' },
    devices: { type: 'string', default: '100' },
    offline: { type: 'string', default: '0' },
    fail: { type: 'string', default: '0' },
    seed: { type: 'string', default: '1' },
    secret: { type: 'string' },
    mqtt: { type: 'string' },
  },
});

const secret = values.secret ?? process.env.ENROLLMENT_SECRET;
const devices = Number(values.devices);
const rate = (name: string, value: string) => {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new Error(`--${name} must be a number between 0 and 1`);
  return n;
};

async function main(): Promise<void> {
  if (!secret) throw new Error('Give the enrollment secret with --secret or ENROLLMENT_SECRET.');
  if (!Number.isInteger(devices) || devices < 1) throw new Error('--devices must be a whole number above 0');
  const fleet = new Fleet({
    server: values.server ?? 'http://localhost:8080',
    enrollmentSecret: secret,
    devices,
    offlineRate: rate('offline', values.offline ?? '0'),
    failRate: rate('fail', values.fail ?? '0'),
    seed: Number(values.seed),
    ...(values.mqtt ? { mqttUrl: values.mqtt } : {}),
  });
  const started = Date.now();
  await fleet.start();
  console.log(`${devices} devices registered and connected in ${Date.now() - started} ms`);
  const timer = setInterval(() => {
    const s = fleet.summary();
    console.log(
      `online ${s.online}/${s.devices} · commands received ${s.received} · executed ${s.executed} · locked ${s.state.locked} · released ${s.state.released}`,
    );
  }, 2000);
  const stop = async () => {
    clearInterval(timer);
    await fleet.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
