import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, waitUntil } from './index';

describe('freePort', () => {
  it('gives a port a server can then listen on', async () => {
    const port = await freePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    expect(server.address()).toMatchObject({ port });
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('waitUntil', () => {
  it('resolves with the first truthy value the check returns', async () => {
    let calls = 0;
    const value = await waitUntil('the third call', () => (++calls >= 3 ? { calls } : undefined), 5000, 1);
    expect(value).toEqual({ calls: 3 });
  });

  it('names what it waited for when the check never holds', async () => {
    await expect(waitUntil('a thing that never happens', () => false, 30, 5)).rejects.toThrow(
      'timed out waiting for a thing that never happens',
    );
  });
});
