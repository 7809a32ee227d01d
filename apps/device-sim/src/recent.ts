/**
 * Bounded memory for a long-running agent: what the simulator keeps per device must not grow
 * for the life of the process.
 */

/** How many recent command messages and acknowledgements a SimulatedDevice keeps for inspection. */
export const HISTORY_LIMIT = 1000;

/**
 * How many finished command ids an agent remembers to de-duplicate (docs/device-protocol.md §7: "a
 * thousand ids are plenty; older ones may be dropped").
 */
export const REMEMBERED_IDS = 1000;

/**
 * An id is never forgotten sooner than this after it was remembered, however many others arrive: 20 times
 * the server's default resend window (`COMMAND_RESEND_AFTER`, 30 s), so a QoS 1 redelivery or a resend
 * is always answered, never executed again.
 */
export const REMEMBER_AT_LEAST_MS = 10 * 60_000;

/** Appends to a list that keeps only its last `limit` entries (oldest dropped first). */
export function pushCapped<T>(list: T[], item: T, limit = HISTORY_LIMIT): void {
  list.push(item);
  if (list.length > limit) list.splice(0, list.length - limit);
}

/**
 * A map of recently seen ids, oldest first: beyond `max` entries the oldest are forgotten, but only once
 * they are older than `minAgeMs` (so the map holds at most `max` ids, or every id of the last `minAgeMs`
 * when more arrived in that time).
 */
export class RecentIds<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(
    readonly max = REMEMBERED_IDS,
    readonly minAgeMs = REMEMBER_AT_LEAST_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  set(id: string, value: V): this {
    const at = this.now();
    // Re-inserted: it is the newest again.
    this.entries.delete(id);
    this.entries.set(id, { value, at });
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.max || entry.at > at - this.minAgeMs) break;
      this.entries.delete(oldest);
    }
    return this;
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }
}
