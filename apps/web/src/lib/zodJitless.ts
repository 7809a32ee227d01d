/**
 * Zod compiles object parsers with `new Function` unless told not to, and merely probing for it is
 * reported as a CSP violation under the server's `script-src 'self'`. Zod reads the flag when a schema
 * is built, so main.tsx imports this module before anything that imports the contract.
 */
import { config } from 'zod';

config({ jitless: true });
