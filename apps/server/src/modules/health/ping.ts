import type { Database } from '../../db/database';

/** How long a health check waits for the database's `SELECT 1` before calling it unreachable. */
export const PING_TIMEOUT_MS = 2000;

/** Whether the database answers a `SELECT 1` within `timeoutMs`; the failure, if any, goes to `onFailure`. */
export async function databaseAnswers(
  database: Pick<Database, 'ping'>,
  onFailure: (error: unknown) => void = () => {},
  timeoutMs = PING_TIMEOUT_MS,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      database.ping(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return true;
  } catch (error) {
    onFailure(error);
    return false;
  } finally {
    clearTimeout(timer);
  }
}
