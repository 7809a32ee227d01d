/**
 * src/db/types.ts against the migrated schema: the Kysely types cannot drift from the tables.
 *
 * The types are written by hand, not generated: a hand-written file keeps the precise types a generator
 * cannot know (the JSON columns' shapes, the text columns' literal unions, the `date` columns read as
 * text). This test keeps them honest. It migrates a database (the test template, on each kind) and reads
 * the catalog (pg_attribute: what `information_schema` would hide from the row-security role), then
 * reads types.ts with the TypeScript compiler API (ts-morph, which bundles its own: the `typescript`
 * package of this repo is the native compiler, without a JavaScript API, and an `npm:typescript@5` alias
 * would install a second `tsc` bin over it) and resolves each column's type as Kysely sees it: its select
 * type and its insert type (a `ColumnType<S, I, U>`'s `S` and `I`, or the type itself). It checks:
 * - every table of the schema (but the migrations' bookkeeping) has an interface in `DB`, and `DB` names
 *   no table the schema does not have;
 * - each interface lists exactly its table's columns;
 * - a column's select type includes `null` exactly where the column is nullable (`unknown`, a JSON
 *   column's, admits it);
 * - a column with a default or an identity may be left out of an insert (`Generated<…>`, `WithDefault<…>`,
 *   an insert type with `undefined`); a NOT NULL column with neither may not (an insert without it fails);
 *   a generated column cannot be inserted at all (`never`);
 * - the select type fits the column's SQL type: a timestamp is a `Date`, an integer a `number` (int8 is
 *   parsed to a number, see database.ts), a boolean a `boolean`, text and `date` a `string` (or literals),
 *   an array an array; json is not checked (its shape is the point of writing the types by hand).
 */
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { Project, type Type } from 'ts-morph';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';

const typesFile = fileURLToPath(new URL('../src/db/types.ts', import.meta.url));
const tsconfig = fileURLToPath(new URL('../tsconfig.json', import.meta.url));

/** The migrator's bookkeeping (database.ts names them), not part of the application's schema. */
const BOOKKEEPING = new Set(['schema_migrations', 'schema_migrations_lock']);

interface SchemaColumn {
  table: string;
  column: string;
  nullable: boolean;
  /** A default, an identity: an insert may leave it out. */
  defaulted: boolean;
  /** GENERATED ALWAYS AS (…) STORED: an insert may not name it. */
  generated: boolean;
  /** pg_type.typcategory (A array, B boolean, D date/time, N numeric, S string, U user-defined, …). */
  category: string;
  typeName: string;
}

interface DeclaredColumn {
  /** The select type, rendered (for messages). */
  select: string;
  /** The select type admits null: a `null` member, or `unknown` (a JSON column's). */
  selectNullable: boolean;
  /** The select type names `null` (what a NOT NULL column must not do). */
  selectNamesNull: boolean;
  /** The kinds of the select type's members, null left out (see `kindOf`). */
  selectKinds: Set<string>;
  insertOptional: boolean;
  insertNever: boolean;
}

async function schemaColumns(database: TestDatabase): Promise<SchemaColumn[]> {
  const rows = await sql<{
    table: string;
    column: string;
    notnull: boolean;
    hasdefault: boolean;
    identity: string;
    generated: string;
    category: string;
    type_name: string;
  }>`
    SELECT c.relname AS table, a.attname AS column, a.attnotnull AS notnull, a.atthasdef AS hasdefault,
           a.attidentity AS identity, a.attgenerated AS generated, t.typcategory AS category,
           format_type(a.atttypid, a.atttypmod) AS type_name
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_type t ON t.oid = a.atttypid
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
       AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY c.relname, a.attnum`.execute(database.db);
  return rows.rows
    .filter((row) => !BOOKKEEPING.has(row.table))
    .map((row) => ({
      table: row.table,
      column: row.column,
      nullable: !row.notnull,
      defaulted: (row.hasdefault && row.generated === '') || row.identity !== '',
      generated: row.generated !== '',
      category: row.category,
      typeName: row.type_name,
    }));
}

/** What a member of a select type is: 'null', 'Date', 'number', 'string', 'boolean', 'array' or 'other'. */
function kindOf(type: Type): string {
  if (type.isNull()) return 'null';
  if (type.isNumber() || type.isNumberLiteral()) return 'number';
  if (type.isString() || type.isStringLiteral() || type.isTemplateLiteral()) return 'string';
  if (type.isBoolean() || type.isBooleanLiteral()) return 'boolean';
  if (type.isArray() || type.isReadonlyArray()) return 'array';
  if (type.getSymbol()?.getName() === 'Date') return 'Date';
  return 'other';
}

function members(type: Type): Type[] {
  // `boolean` is the union `true | false`: a member of its own, as TypeScript prints it.
  return type.isUnion() && !type.isBoolean() ? type.getUnionTypes() : [type];
}

/** The `DB` interface of types.ts, each table's columns as Kysely reads them. */
function declaredTables(): Map<string, Map<string, DeclaredColumn>> {
  const project = new Project({ tsConfigFilePath: tsconfig, skipAddingFilesFromTsConfig: true });
  const file = project.addSourceFileAtPath(typesFile);
  project.resolveSourceFileDependencies();
  const dbInterface = file.getInterfaceOrThrow('DB');
  const tables = new Map<string, Map<string, DeclaredColumn>>();
  for (const tableProperty of dbInterface.getType().getProperties()) {
    const tableType = tableProperty.getTypeAtLocation(dbInterface);
    const columns = new Map<string, DeclaredColumn>();
    for (const columnProperty of tableType.getProperties()) {
      const columnType = columnProperty.getTypeAtLocation(dbInterface);
      const selectSymbol = columnType.getProperty('__select__');
      const insertSymbol = columnType.getProperty('__insert__');
      // A ColumnType<S, I, U> carries its types in phantom properties; any other type is all three.
      const select = selectSymbol ? selectSymbol.getTypeAtLocation(dbInterface) : columnType;
      const insert = insertSymbol ? insertSymbol.getTypeAtLocation(dbInterface) : columnType;
      const selectMembers = members(select).map(kindOf);
      const insertMembers = members(insert);
      columns.set(columnProperty.getName(), {
        select: select.getText(dbInterface),
        selectNullable: selectMembers.includes('null') || select.isUnknown() || select.isAny(),
        selectNamesNull: selectMembers.includes('null'),
        selectKinds: new Set(selectMembers.filter((kind) => kind !== 'null')),
        // Kysely's Insertable makes a key optional when its insert type admits undefined or null.
        insertOptional: insertMembers.some((member) => member.isUndefined() || member.isNull()),
        insertNever: insert.isNever(),
      });
    }
    tables.set(tableProperty.getName(), columns);
  }
  return tables;
}

/** The select type's kinds a column of this SQL type may have (undefined: not checked). */
function allowedKinds(column: SchemaColumn): string[] | undefined {
  if (column.category === 'A') return ['array'];
  if (column.typeName === 'date') return ['string'];
  if (column.typeName.startsWith('timestamp')) return ['Date'];
  if (['smallint', 'integer', 'bigint', 'real', 'double precision'].includes(column.typeName))
    return ['number'];
  if (column.typeName === 'boolean') return ['boolean'];
  if (column.category === 'S') return ['string'];
  return undefined;
}

/** Every disagreement between the schema and the declared types, one line each. */
function drift(schema: SchemaColumn[], declared: Map<string, Map<string, DeclaredColumn>>): string[] {
  const problems: string[] = [];
  const schemaTables = new Map<string, SchemaColumn[]>();
  for (const column of schema)
    schemaTables.set(column.table, [...(schemaTables.get(column.table) ?? []), column]);
  for (const table of declared.keys())
    if (!schemaTables.has(table)) problems.push(`DB.${table}: no such table in the schema`);
  for (const [table, columns] of schemaTables) {
    const declaredColumns = declared.get(table);
    if (!declaredColumns) {
      problems.push(`${table}: a table of the schema missing from DB`);
      continue;
    }
    for (const name of declaredColumns.keys())
      if (!columns.some((column) => column.column === name))
        problems.push(`${table}.${name}: no such column`);
    for (const column of columns) {
      const where = `${table}.${column.column}`;
      const type = declaredColumns.get(column.column);
      if (!type) {
        problems.push(`${where}: a column of the schema missing from the interface`);
        continue;
      }
      if (column.nullable && !type.selectNullable) problems.push(`${where}: nullable, typed ${type.select}`);
      if (!column.nullable && type.selectNamesNull) problems.push(`${where}: NOT NULL, typed ${type.select}`);
      if (column.generated && !type.insertNever)
        problems.push(`${where}: a generated column, its insert type should be never`);
      if (column.defaulted && !type.insertOptional && !type.insertNever)
        problems.push(`${where}: has a default, an insert should be able to leave it out (Generated)`);
      if (!column.nullable && !column.defaulted && !column.generated && type.insertOptional)
        problems.push(`${where}: NOT NULL without a default, an insert must give it`);
      const allowed = allowedKinds(column);
      const strays = [...type.selectKinds].filter((kind) => allowed && !allowed.includes(kind));
      if (strays.length > 0) problems.push(`${where}: ${column.typeName}, typed ${type.select}`);
    }
  }
  return problems;
}

// Read once: compiling types.ts with its imports takes a few seconds.
let declared: Map<string, Map<string, DeclaredColumn>>;
beforeAll(() => {
  declared = declaredTables();
});

describe.each(databaseKinds())('db/types.ts against the migrated schema (%s)', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('declares every table and column, with the nullability, defaults and types of the schema', async () => {
    const schema = await schemaColumns(database);
    // The read found the schema (a catalog query that saw nothing would pass vacuously).
    expect(new Set(schema.map((column) => column.table)).size).toBeGreaterThan(30);
    expect(declared.get('devices')?.get('imei1')?.selectKinds).toEqual(new Set(['string']));
    expect(drift(schema, declared)).toEqual([]);
  });

  it('reports a drift: a column left out, a nullable column typed NOT NULL, a table unknown', async () => {
    const schema = await schemaColumns(database);
    const tampered = new Map([...declared].map(([table, columns]) => [table, new Map(columns)]));
    tampered.get('devices')?.delete('last_seen_at');
    const body = tampered.get('mail_outbox')?.get('body');
    if (!body) throw new Error('mail_outbox.body is not declared');
    tampered.get('mail_outbox')?.set('body', { ...body, selectNullable: false, selectNamesNull: false });
    tampered.set('no_such_table', new Map());
    expect(drift(schema, tampered)).toEqual([
      'DB.no_such_table: no such table in the schema',
      'devices.last_seen_at: a column of the schema missing from the interface',
      'mail_outbox.body: nullable, typed string | null',
    ]);
  });
});
