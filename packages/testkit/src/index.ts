/**
 * The shared test kit: what the server tests (apps/server), the browser tests (e2e) and the benchmarks
 * (bench) all need. Test code only: no runtime code (apps/server/src and the like) imports it.
 */

export { ApiClient, type Credentials } from './api';
export { freePort } from './net';
export { waitUntil } from './poll';
export { REPO_ROOT, SERVER_NODE_OPTIONS, stopChild } from './process';
