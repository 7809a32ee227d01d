/**
 * `npm run build -w @lendlock/server`: the server as one ES module, `dist/main.js`, which `npm start`
 * runs with plain Node, and the operator CLI as another, `dist/cli.js` (`node apps/server/dist/cli.js …`
 * where only the runtime dependencies are installed: neither needs tsx). Lendlock's own code (the server, the contract, the device simulator the demo
 * uses) is bundled and its TypeScript compiled once; every npm dependency stays external and loads from
 * node_modules (native modules and PGlite's WebAssembly files must). Running the bundle instead of the
 * sources through tsx saves the loader and on-the-fly compilation: about 80 MB of memory at idle
 * (docs/performance.md). A source map lies beside it (`node --enable-source-maps` uses it).
 */
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const dependenciesOf = (path) => Object.keys(JSON.parse(readFileSync(path, 'utf8')).dependencies ?? {});
const external = [
  ...new Set([
    ...dependenciesOf('package.json'),
    ...dependenciesOf('../../packages/contract/package.json'),
    ...dependenciesOf('../device-sim/package.json'),
  ]),
]
  .filter((name) => !name.startsWith('@lendlock/'))
  .flatMap((name) => [name, `${name}/*`]);

await build({
  entryPoints: ['src/main.ts', 'src/cli.ts'],
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  external,
  logLevel: 'warning',
});
