/**
 * The gateway's publish queue: priority work leaves first, batch work is not starved, a
 * device's commands keep their order, and a refused publish loses nothing else.
 */
import { describe, expect, it } from 'vitest';
import { PublishQueue } from './gateway';

/** A broker held by the test: each publish waits until the test answers it. */
function heldBroker() {
  const pending: { name: string; done: (error?: Error) => void }[] = [];
  return {
    pending,
    send: (name: string) => (done: (error?: Error) => void) => {
      pending.push({ name, done });
    },
    /** Answers the oldest publish in flight (PUBACK, or a refusal). */
    answer(error?: Error) {
      const next = pending.shift();
      if (!next) throw new Error('nothing in flight');
      next.done(error);
      return next.name;
    },
    /** Answers everything in flight, and what enters the window meanwhile, in order. */
    drain() {
      const order: string[] = [];
      while (pending.length > 0) order.push(this.answer());
      return order;
    },
  };
}

describe('PublishQueue', () => {
  it('sends priority publishes before the batch publishes that waited longer', async () => {
    const broker = heldBroker();
    const queue = new PublishQueue(1, 1000);
    const outcomes = [
      queue.push(0, 'a', broker.send('batch-1')),
      queue.push(0, 'b', broker.send('batch-2')),
      queue.push(0, 'c', broker.send('batch-3')),
      queue.push(2, 'd', broker.send('release')),
    ];
    expect(queue.sending).toBe(1);
    expect(queue.waiting).toBe(3);
    expect(broker.drain()).toEqual(['batch-1', 'release', 'batch-2', 'batch-3']);
    await Promise.all(outcomes);
  });

  it('keeps at most `window` publishes in flight', () => {
    const broker = heldBroker();
    const queue = new PublishQueue(3);
    for (let i = 0; i < 10; i++) void queue.push(0, `d${i}`, broker.send(`c${i}`));
    expect(broker.pending).toHaveLength(3);
    expect(queue.waiting).toBe(7);
    broker.answer();
    expect(broker.pending).toHaveLength(3);
    expect(queue.waiting).toBe(6);
  });

  it('does not starve batch work: every BULK_SHARE-th slot goes to it while both lines wait', async () => {
    const broker = heldBroker();
    const queue = new PublishQueue(1, 4);
    const outcomes = [queue.push(0, 'x', broker.send('first'))];
    for (let i = 0; i < 3; i++) outcomes.push(queue.push(0, `b${i}`, broker.send(`batch-${i}`)));
    for (let i = 0; i < 9; i++) outcomes.push(queue.push(2, `s${i}`, broker.send(`single-${i}`)));
    expect(broker.drain()).toEqual([
      'first',
      'single-0',
      'single-1',
      'single-2',
      'batch-0',
      'single-3',
      'single-4',
      'single-5',
      'batch-1',
      'single-6',
      'single-7',
      'single-8',
      'batch-2',
    ]);
    await Promise.all(outcomes);
  });

  it("never lets a priority publish overtake a device's own batch publish that waits", async () => {
    const broker = heldBroker();
    const queue = new PublishQueue(1, 1000);
    const outcomes = [
      queue.push(0, 'other', broker.send('busy')),
      queue.push(0, 'dev', broker.send('dev-lock (batch)')),
      queue.push(0, 'other', broker.send('other (batch)')),
      queue.push(2, 'dev', broker.send('dev-unlock (single)')),
      queue.push(2, 'free', broker.send('free-release (single)')),
    ];
    expect(broker.drain()).toEqual([
      'busy',
      'free-release (single)',
      'dev-lock (batch)',
      'other (batch)',
      'dev-unlock (single)',
    ]);
    await Promise.all(outcomes);
  });

  it('loses nothing when the broker refuses a publish: only that one fails, the line moves on', async () => {
    const broker = heldBroker();
    const queue = new PublishQueue(2);
    const outcomes = ['a', 'b', 'c', 'd', 'e'].map((name, i) =>
      queue.push(i === 4 ? 2 : 0, name, broker.send(name)).then(
        () => `${name}: sent`,
        (error: Error) => `${name}: ${error.message}`,
      ),
    );
    broker.answer(); // a
    broker.answer(new Error('refused')); // b
    broker.drain();
    expect(await Promise.all(outcomes)).toEqual(['a: sent', 'b: refused', 'c: sent', 'd: sent', 'e: sent']);
    expect(queue.sending).toBe(0);
    expect(queue.waiting).toBe(0);
  });

  it('settles a publish whose send throws, and goes on with the next', async () => {
    const broker = heldBroker();
    const queue = new PublishQueue(1);
    const thrown = queue.push(2, 'a', () => {
      throw new Error('socket closed');
    });
    const next = queue.push(0, 'b', broker.send('b'));
    await expect(thrown).rejects.toThrow('socket closed');
    expect(broker.answer()).toBe('b');
    await next;
  });

  it('fails every waiting publish when the connection goes, so that their callers queue them again', async () => {
    const broker = heldBroker();
    const queue = new PublishQueue(1);
    const inFlight = queue.push(0, 'a', broker.send('a'));
    const waiting = [queue.push(0, 'b', broker.send('b')), queue.push(2, 'c', broker.send('c'))];
    queue.failWaiting(new Error('broker not connected'));
    for (const outcome of waiting) await expect(outcome).rejects.toThrow('broker not connected');
    expect(queue.waiting).toBe(0);
    broker.answer();
    await inFlight;
    // The queue works on afterwards.
    const later = queue.push(0, 'b', broker.send('later'));
    expect(broker.answer()).toBe('later');
    await later;
  });
});
