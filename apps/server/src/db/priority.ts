/**
 * Which work is being done now, so that the queues it passes through can put it first:
 * single and API commands (commands.priority 2), the server's own reconcile commands (1), batch and
 * device-action ALL work (0). The class travels with the asynchronous context (AsyncLocalStorage), so
 * code between the entry point and a queue needs no extra argument: an HTTP request for a command
 * route is marked when it arrives (`registerPriorityRequests`), and everything it awaits, its database
 * connections included (database.ts), runs as priority work.
 *
 * The queues that read it: the database pool (database.ts: priority work takes a reserved pool of its
 * own, never waiting for a connection behind reads or batch chunks), the broker publish queue
 * (channel/gateway.ts `publish(…, { priority })`) and the device inbox (`inboxOrder`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

/** commands.priority of single and API commands. */
export const PRIORITY_SINGLE = 2;
/** commands.priority of the commands the server issues to reconcile a device's reported state. */
export const PRIORITY_RECONCILE = 1;
/** commands.priority of batch and device-action ALL commands. */
export const PRIORITY_BULK = 0;

const context = new AsyncLocalStorage<number>();

/** The priority of the work running now (PRIORITY_BULK outside any marked context). */
export function currentPriority(): number {
  return context.getStore() ?? PRIORITY_BULK;
}

/** Whether the work running now goes ahead of batch work (priority ≥ PRIORITY_RECONCILE). */
export function isPriorityWork(): boolean {
  return currentPriority() >= PRIORITY_RECONCILE;
}

/** Runs `fn` (and everything it starts) as work of `priority`. */
export function withPriority<T>(priority: number, fn: () => T): T {
  return context.run(priority, fn);
}

/**
 * Marks every request to a route whose access policy is `command` (the single-command endpoints of the
 * console and of integrators) as priority work, from its first hook on: its authentication query, its
 * transaction and the publish after commit all take the reserved queues. Register it before the auth
 * hook (app.ts: `registerPriorityRequests(app)` just before `registerAuth(…)`). The hook is
 * callback-style on purpose: the rest of the request's hooks and its handler run from `done`, inside
 * the context (as @fastify/request-context does it).
 */
export function registerPriorityRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const access = request.routeOptions.config.access as { kind?: string } | undefined;
    if (access?.kind === 'command') context.run(PRIORITY_SINGLE, done);
    else done();
  });
}

/**
 * The order in which a device inbox applies what it gathered: the messages of every device that has a
 * priority message among them (the acknowledgement of a priority command: gateway `isPriorityAck`)
 * first, then the others. Within each group the arrival order stands, so a device's own messages keep
 * their order (its state reports are applied oldest first, as before); nothing is dropped or repeated,
 * and the others keep their order behind. For CommandService's inbox: order the queue with it before
 * taking the next flush off it.
 */
export function inboxOrder<T>(
  messages: readonly T[],
  isPriority: (message: T) => boolean,
  deviceOf: (message: T) => string,
): T[] {
  const urgent = new Set<string>();
  for (const message of messages) if (isPriority(message)) urgent.add(deviceOf(message));
  if (urgent.size === 0) return [...messages];
  const first: T[] = [];
  const rest: T[] = [];
  for (const message of messages) (urgent.has(deviceOf(message)) ? first : rest).push(message);
  return [...first, ...rest];
}
