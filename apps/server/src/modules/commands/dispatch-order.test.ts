/** The order in which claimed commands of several devices are published (commands/repository.ts). */
import { describe, expect, it } from 'vitest';
import { byPriority } from './repository';

const row = (id: number, imei1: string, priority: number) => ({ id, imei1, priority });

describe('byPriority', () => {
  it('puts the devices with a single command first, and keeps each device in id order', () => {
    const claimed = [
      row(1, 'A', 0),
      row(2, 'B', 0),
      row(3, 'A', 2), // A's release, behind A's own batch command
      row(4, 'C', 1),
      row(5, 'B', 0),
    ];
    expect(byPriority(claimed).map((r) => r.id)).toEqual([1, 3, 4, 2, 5]);
  });

  it('is the id order when every command has the same priority', () => {
    const claimed = [row(3, 'B', 0), row(1, 'A', 0), row(2, 'B', 0)];
    expect(byPriority(claimed).map((r) => r.id)).toEqual([1, 2, 3]);
  });
});
