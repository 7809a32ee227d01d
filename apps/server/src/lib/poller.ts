import { asSystem } from '../db/tenant';

/**
 * The loop of a queue worker that lives in a database table (the mail outbox, webhook deliveries): it
 * drains the queue every `pollMs`, at once when woken (after this instance queued something), never two
 * drains at a time (a wake during a drain runs one more drain after it), and stops cleanly: `stop()`
 * waits for the drain under way; what is left waits in the table for the next start, here or elsewhere.
 */
export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private polling = false;
  private stopped = false;

  /** `drain` must not throw: it logs its own failures and leaves the work queued. */
  constructor(
    private readonly drain: (stopped: () => boolean) => Promise<void>,
    private readonly pollMs: number,
  ) {}

  get closed(): boolean {
    return this.stopped;
  }

  /** Polls until `stop()`. */
  start(): void {
    if (this.polling || this.stopped) return;
    this.polling = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Drains now, without waiting for the next poll. */
  wake(): void {
    if (!this.stopped) void this.runOnce();
  }

  /** One drain (or joins the one under way, and asks for another after it). Never throws. */
  runOnce(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    // Shared work: as the system, never as the tenant of the request that woke it (db/tenant.ts).
    this.running = asSystem(async () => {
      do {
        this.again = false;
        await this.drain(() => this.stopped);
      } while (this.again && !this.stopped);
    }).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runOnce().finally(() => this.schedule(this.pollMs));
    }, delayMs);
    this.timer.unref();
  }
}
