/**
 * A Kysely dialect whose connections carry the tenant of the work that takes them (tenant.ts): after a
 * connection is acquired, `lendlock.tenant` is set on it when its last value differs from the tenant of
 * the caller, captured before waiting for the connection. A connection that already has the tenant costs
 * nothing more, so lender and system traffic (all '*') pays one statement per backend, once. A
 * transaction acquires its connection once: the whole transaction runs as one tenant.
 *
 * It also switches each connection to the role subject to row-level security (`useRole`, roles.ts
 * `enforceRowSecurity`) when the connected one bypasses it (a superuser: tests, PGlite).
 */
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type TransactionSettings,
} from 'kysely';
import { currentTenant, TENANT_SETTING } from './tenant';

/** The statements that set a connection's tenant (and role): prepared like any other. */
export const TENANT_STATEMENT = `SELECT set_config('${TENANT_SETTING}', $1, false)`;
const ROLE_AND_TENANT_STATEMENT = `SELECT set_config('role', $1, false), set_config('${TENANT_SETTING}', $2, false)`;

interface ConnectionState {
  tenant?: string;
  role?: string;
}

/** What the driver keeps per backend, and which role every connection must take (null: its own). */
export interface TenantControl {
  /** Makes every connection, already open or not, act as `role` from its next acquisition on. */
  useRole(role: string): void;
}

class TenantDriver implements Driver {
  readonly #states = new WeakMap<object, ConnectionState>();
  #role: string | null = null;

  constructor(
    private readonly inner: Driver,
    /** The backend behind a connection object (PGlite hands out a new object for its one backend). */
    private readonly backendOf: (connection: DatabaseConnection) => object,
  ) {}

  useRole(role: string): void {
    this.#role = role;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const tenant = currentTenant();
    const connection = await this.inner.acquireConnection();
    const backend = this.backendOf(connection);
    let state = this.#states.get(backend);
    if (!state) {
      state = {};
      this.#states.set(backend, state);
    }
    const role = this.#role;
    const roleDue = role !== null && state.role !== role;
    if (state.tenant !== tenant || roleDue) {
      try {
        await connection.executeQuery(
          roleDue
            ? CompiledQuery.raw(ROLE_AND_TENANT_STATEMENT, [role, tenant])
            : CompiledQuery.raw(TENANT_STATEMENT, [tenant]),
        );
      } catch (error) {
        // Unknown state: set both again next time.
        this.#states.delete(backend);
        await this.inner.releaseConnection(connection);
        throw error;
      }
      state.tenant = tenant;
      if (roleDue) state.role = role;
    }
    return connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    if (!this.inner.savepoint) throw new Error('This dialect has no savepoints');
    return this.inner.savepoint(connection, name, compile);
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    if (!this.inner.rollbackToSavepoint) throw new Error('This dialect has no savepoints');
    return this.inner.rollbackToSavepoint(connection, name, compile);
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    if (!this.inner.releaseSavepoint) throw new Error('This dialect has no savepoints');
    return this.inner.releaseSavepoint(connection, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** Wraps `dialect` so that its connections carry the current tenant; `control` switches their role. */
export function tenantDialect(
  dialect: Dialect,
  backendOf: (connection: DatabaseConnection) => object = (connection) => connection,
): { dialect: Dialect; control: TenantControl } {
  let driver: TenantDriver | null = null;
  let role: string | null = null;
  const wrapped: Dialect = {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db: Kysely<unknown>) => dialect.createIntrospector(db),
    createDriver: () => {
      driver = new TenantDriver(dialect.createDriver(), backendOf);
      if (role !== null) driver.useRole(role);
      return driver;
    },
  };
  return {
    dialect: wrapped,
    control: {
      useRole: (next) => {
        role = next;
        driver?.useRole(next);
      },
    },
  };
}
