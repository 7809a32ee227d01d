/**
 * A module whose service is a set of functions over the database (`fn(db, …args)`) is handed to routes as
 * one object whose functions have the database bound (container.ts): routes never hold the database.
 */

/** `fns` with their first parameter (the database) bound. */
export type Bound<D, T> = {
  readonly [K in keyof T]: T[K] extends (db: D, ...args: infer A) => infer R ? (...args: A) => R : never;
};

export function bindDb<D, T extends Record<string, (db: D, ...args: never) => unknown>>(
  db: D,
  fns: T,
): Bound<D, T> {
  const bound: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(fns)) {
    bound[name] = (...args: unknown[]) => (fn as (db: D, ...rest: unknown[]) => unknown)(db, ...args);
  }
  return bound as Bound<D, T>;
}
