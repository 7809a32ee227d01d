/**
 * The database: PGlite in DATA_DIR by default, PostgreSQL when DATABASE_URL is set. One SQL dialect.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { MIGRATIONS } from './migrations/index';
import { usePreparedStatements } from './prepared';
import { isPriorityWork } from './priority';
import { tenantDialect } from './tenant-dialect';
import type { DB } from './types';

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database {
  readonly db: Kysely<DB>;
  readonly kind: DatabaseKind;
  /** Resolves when a trivial query answers. */
  ping(): Promise<void>;
  /**
   * Makes every connection act as `role` (SET ROLE) from its next acquisition on: for a connected role
   * that would bypass row-level security (roles.ts `enforceRowSecurity`).
   */
  useRole(role: string): void;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /**
   * PostgreSQL: connections reserved for priority work (single and API commands, reconcile, their
   * acknowledgements: db/priority.ts), beside `poolSize`. Priority work takes a connection from this pool
   * and never waits behind reads or batch chunks for one of the main pool; 0 turns the reserve off.
   */
  priorityPoolSize?: number;
  /** PostgreSQL: run parameterised queries as named prepared statements (default on). */
  preparedStatements?: boolean;
}

// int8 (count(*), bigint ids) as number on pg, like PGlite does: our counts stay far below 2^53.
pg.types.setTypeParser(20, (value) => Number.parseInt(value, 10));

/**
 * Connections of the main pool (DatabaseOptions.poolSize, DATABASE_POOL_SIZE). PostgreSQL shares its
 * cores among the backends that are running: with 20 busy connections on a 2-core machine, a release's
 * statements on the reserved pool got a twenty-first of the CPU and took 284–317 ms (p50) under two
 * batches and 50 reading clients; with 10, 135 ms, while the batches ran faster and the reads as fast
 * (bench/release.ts, docs/performance-investigations.md).
 */
export const DEFAULT_POOL_SIZE = 10;

/** Connections reserved for priority work (DatabaseOptions.priorityPoolSize). */
export const DEFAULT_PRIORITY_POOL_SIZE = 4;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const databaseUrl = options.databaseUrl;
    const openPool = (max: number, keepOpen = false) => {
      // The reserved pool keeps its connections open: a release must not wait for a new backend.
      const pool = new pg.Pool({
        connectionString: databaseUrl,
        max,
        ...(keepOpen ? { idleTimeoutMillis: 0, allowExitOnIdle: true } : {}),
      });
      // A connection dropped by the server (a restart, a failover) must not crash the process: idle
      // clients report through the pool, checked-out ones through the query that fails (→ 503), and the
      // pool then opens fresh connections.
      pool.on('error', () => {});
      pool.on('connect', (client) => {
        client.on('error', () => {});
        if (options.preparedStatements !== false) usePreparedStatements(client);
      });
      return pool;
    };
    const main = openPool(options.poolSize ?? DEFAULT_POOL_SIZE);
    const reservedMax = options.priorityPoolSize ?? DEFAULT_PRIORITY_POOL_SIZE;
    const reserved = reservedMax > 0 ? openPool(reservedMax, true) : null;
    // pg's pool hands connections out first come, first served: a release typed at the counter queued
    // behind every read and batch chunk waiting before it. Priority work has a pool of its own instead;
    // when every reserved connection is busy (many single commands at once), it takes an idle one of the
    // main pool rather than wait, and never waits behind the main pool's queue.
    const pool = {
      connect: () => {
        if (!reserved || !isPriorityWork()) return main.connect();
        const reserveFree = reserved.idleCount > 0 || reserved.totalCount < reservedMax;
        const mainIdle = main.idleCount > 0 && main.waitingCount === 0;
        return (reserveFree || !mainIdle ? reserved : main).connect();
      },
      end: async () => {
        await Promise.all([main.end(), reserved?.end()]);
      },
    };
    // Each connection carries the tenant of the work that takes it (tenant-dialect.ts, docs/adr/0011).
    const { dialect, control } = tenantDialect(new PostgresDialect({ pool }));
    const db = new Kysely<DB>({ dialect });
    return {
      db,
      kind: 'postgres',
      useRole: control.useRole,
      ping: async () => {
        await sql`SELECT 1`.execute(db);
      },
      close: () => db.destroy(),
    };
  }
  const dir = join(options.dataDir, 'pgdata');
  mkdirSync(dir, { recursive: true });
  const lite = await PGlite.create(dir);
  // One backend: its tenant is tracked once, whatever connection object the driver hands out.
  const { dialect, control } = tenantDialect(new PGliteDialect(lite), () => lite);
  const db = new Kysely<DB>({ dialect });
  return {
    db,
    kind: 'pglite',
    useRole: control.useRole,
    ping: async () => {
      await sql`SELECT 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/**
 * Applies every pending migration, in order, or those up to and including `to` (the migration tests start
 * from an earlier schema); throws on the first failure.
 */
export async function migrate(db: Kysely<DB>, to?: keyof typeof MIGRATIONS): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = to ? await migrator.migrateTo(to) : await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
