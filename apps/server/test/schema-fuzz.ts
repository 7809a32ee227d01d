/**
 * Hostile requests generated from the app's own registered schemas. These are the OpenAPI document
 * @fastify/swagger builds from the routes' zod schemas, so a route added tomorrow is fuzzed without
 * editing a test. For each route: a request valid in shape, apart from one hostile string put in one
 * string field (or, for a route without one, in an extra field). The string holds a NUL character, a
 * lone surrogate, an impossible date or an over-long value.
 */
import fc from 'fast-check';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
}

interface OpenApiOperation {
  parameters?: { in: string; name: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export type Part = 'body' | 'query' | 'params';

export interface RouteInput {
  /** `METHOD /path`, as ROUTE_POLICIES names it. */
  key: string;
  method: string;
  path: string;
  body?: JsonSchema;
  query?: JsonSchema;
  params?: JsonSchema;
}

/** One string field of a route's input. */
export interface Leaf {
  part: Part;
  path: (string | number)[];
  schema: JsonSchema;
}

/** The inputs of each route named in `keys` (`METHOD /path` with `:param`), from the document. */
export function routeInputs(document: OpenApiDocument, keys: readonly string[]): RouteInput[] {
  return keys.map((key) => {
    const [method = '', path = ''] = key.split(' ');
    const operation = document.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()] ?? {};
    const input: RouteInput = { key, method, path };
    const body = operation.requestBody?.content?.['application/json']?.schema;
    if (body) input.body = body;
    for (const where of ['query', 'path'] as const) {
      const parameters = (operation.parameters ?? []).filter((p) => p.in === where);
      if (parameters.length === 0) continue;
      const schema: JsonSchema = {
        type: 'object',
        properties: Object.fromEntries(parameters.map((p) => [p.name, p.schema])),
        required: parameters.filter((p) => p.required || where === 'path').map((p) => p.name),
      };
      if (where === 'query') input.query = schema;
      else input.params = schema;
    }
    return input;
  });
}

const typesOf = (schema: JsonSchema): string[] =>
  Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];

/** The branches of a union, without the null one. */
const branches = (schema: JsonSchema): JsonSchema[] =>
  [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].filter((b) => !typesOf(b).includes('null'));

function isString(schema: JsonSchema): boolean {
  return typesOf(schema).includes('string') && schema.enum === undefined && schema.const === undefined;
}

/** Every string field (enums excluded: a hostile string there is just a wrong value). */
export function stringLeaves(input: RouteInput): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (schema: JsonSchema, part: Part, path: (string | number)[]) => {
    for (const branch of [...branches(schema), ...(schema.allOf ?? [])]) walk(branch, part, path);
    if (isString(schema)) leaves.push({ part, path, schema });
    for (const [name, child] of Object.entries(schema.properties ?? {})) walk(child, part, [...path, name]);
    if (schema.items) walk(schema.items, part, [...path, 0]);
  };
  for (const part of ['body', 'query', 'params'] as const) {
    const schema = input[part];
    if (schema) walk(schema, part, []);
  }
  return leaves;
}

const ISO_DAY = (d: Date) => d.toISOString().slice(0, 10);
const days = fc.date({ min: new Date('2001-01-01'), max: new Date('2099-12-31'), noInvalidDate: true });

/** A value valid for `schema` (within reason: patterns, bounds, enums, required properties). */
export function valid(schema: JsonSchema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const union = branches(schema);
  if (union.length > 0) return fc.oneof(...union.map(valid));
  if (schema.allOf?.[0]) return valid(schema.allOf[0]);
  const type = typesOf(schema).find((t) => t !== 'null');
  switch (type) {
    case 'object': {
      const properties = schema.properties ?? {};
      return fc.record(
        Object.fromEntries(Object.entries(properties).map(([name, child]) => [name, valid(child)])),
        { requiredKeys: (schema.required ?? []).filter((name) => name in properties) },
      );
    }
    case 'array':
      return fc.array(valid(schema.items ?? {}), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.max(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3)),
      });
    case 'integer':
    case 'number': {
      const min = Math.max(schema.minimum ?? 0, -1_000_000);
      const max = Math.min(schema.maximum ?? min + 1000, min + 1000);
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'boolean':
      return fc.boolean();
    case 'string':
      return validString(schema);
    default:
      return fc.constant(null);
  }
}

function validString(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? 40;
  if (schema.format === 'date') return days.map(ISO_DAY);
  if (schema.format === 'date-time') return days.map((d) => d.toISOString());
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.pattern)
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max);
  return fc.string({ minLength: min, maxLength: Math.min(max, Math.max(min, 20)) });
}

/** Reads the value at `path` (for the string a hostile value is spliced into). */
function at(value: unknown, path: readonly (string | number)[]): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown> | undefined)?.[key];
  return current;
}

/** A copy of `value` with `leaf` set at `path`, making the containers on the way. */
export function withValue(value: unknown, path: readonly (string | number)[], leaf: unknown): unknown {
  if (path.length === 0) return leaf;
  const [key, ...rest] = path as [string | number, ...(string | number)[]];
  const container = (
    typeof key === 'number'
      ? [...(Array.isArray(value) ? value : [])]
      : { ...(value && typeof value === 'object' && !Array.isArray(value) ? value : {}) }
  ) as Record<string | number, unknown>;
  container[key] = withValue(container[key], rest, leaf);
  return container;
}

export type HostileKind = 'nul' | 'surrogate' | 'date' | 'long';

export interface Hostile {
  kind: HostileKind;
  value: string;
}

/** Well-formed days that are not on the calendar, and shapes PostgreSQL would refuse. */
export const IMPOSSIBLE_DAYS = [
  '2026-02-30',
  '2025-02-29',
  '2026-04-31',
  '2026-13-01',
  '2026-00-10',
  '2026-01-00',
  '0000-01-01',
];

/** A field that holds a date: by its format, its pattern or its name. */
export function isDateField(leaf: Leaf): boolean {
  const name = String(leaf.path.at(-1) ?? '');
  return (
    leaf.schema.format === 'date' ||
    leaf.schema.format === 'date-time' ||
    /\\d\{4\}-/.test(leaf.schema.pattern ?? '') ||
    /date|^from$|^to$|At$/i.test(name)
  );
}

/** The body limit of the app (bodyLimit in app.ts): a longer body gets 413. */
export const BODY_LIMIT = 1024 * 1024;

/**
 * Hostile strings for `leaf`: the valid string with a NUL or a lone surrogate spliced in (not in a query
 * or path: a URL cannot carry a lone surrogate), an impossible date (date fields), and a value over the
 * field's limit (over the body limit when the field has none).
 */
export function hostile(leaf: Leaf, base: string): fc.Arbitrary<Hostile> {
  const splice = (insert: fc.Arbitrary<string>) =>
    fc.tuple(fc.nat({ max: base.length }), insert).map(([i, c]) => `${base.slice(0, i)}${c}${base.slice(i)}`);
  const kinds: fc.Arbitrary<Hostile>[] = [
    splice(fc.constantFrom('\u0000', 'a\u0000b', '\u0000\u0000')).map((value) => ({
      kind: 'nul' as const,
      value,
    })),
  ];
  if (leaf.part === 'body')
    kinds.push(
      splice(fc.constantFrom('\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uDFFF\uD800')).map((value) => ({
        kind: 'surrogate' as const,
        value,
      })),
    );
  if (isDateField(leaf)) {
    const day = fc.constantFrom(...IMPOSSIBLE_DAYS).map((day) => ({
      kind: 'date' as const,
      value: leaf.schema.format === 'date-time' ? `${day}T00:00:00.000Z` : day,
    }));
    // Few fields hold dates: on those, an impossible day is tried more often than the rest.
    kinds.push(day, day, day);
  }
  const max = leaf.schema.maxLength;
  kinds.push(
    (max === undefined || max >= BODY_LIMIT
      ? fc.constant(BODY_LIMIT + 1)
      : fc.integer({ min: max + 1, max: Math.min(max + 100, BODY_LIMIT + 1) })
    ).map((n) => ({ kind: 'long' as const, value: '7'.repeat(n) })),
  );
  return fc.oneof(...kinds);
}

/**
 * The query and path parameters of `input` that are not strings in the schema (numbers, say): on the wire
 * they are text all the same, so a GET whose parameters are all numbers is fuzzed through them.
 */
export function wireLeaves(input: RouteInput): Leaf[] {
  const leaves: Leaf[] = [];
  for (const part of ['query', 'params'] as const)
    for (const [name, child] of Object.entries(input[part]?.properties ?? {}))
      if (child.enum === undefined && child.const === undefined)
        leaves.push({ part, path: [name], schema: { type: 'string' } });
  return leaves;
}

/** A request of `input` valid but for one hostile string in one field (or in an extra body field). */
export function hostileRequest(input: RouteInput): fc.Arbitrary<{
  leaf: Leaf;
  hostile: Hostile;
  values: Partial<Record<Part, unknown>>;
}> {
  const leaves = stringLeaves(input);
  // A route without string fields still gets one: an extra field, which the text guard sees too.
  // (No length limit on it: an over-long one makes the body too large.)
  const extra: Leaf = { part: 'body', path: ['note'], schema: { type: 'string' } };
  const candidates = leaves.length > 0 ? leaves : input.method === 'GET' ? wireLeaves(input) : [extra];
  if (candidates.length === 0) throw new Error(`${input.key} has no input to fuzz`);
  const parts = fc.record({
    body: input.body ? valid(input.body) : fc.constant(undefined),
    query: input.query ? valid(input.query) : fc.constant(undefined),
    params: input.params ? valid(input.params) : fc.constant(undefined),
  });
  return fc.tuple(fc.constantFrom(...candidates), parts).chain(([leaf, values]) => {
    const current = at(values[leaf.part], leaf.path);
    return hostile(leaf, typeof current === 'string' ? current : 'x').map((bad) => ({
      leaf,
      hostile: bad,
      values: { ...values, [leaf.part]: withValue(values[leaf.part] ?? {}, leaf.path, bad.value) },
    }));
  });
}

/** Percent-encodes a string for a URL (NUL included); values here never hold lone surrogates. */
const encode = (value: unknown) => encodeURIComponent(String(value));

/** The URL of `input` with its path parameters and query string. */
export function urlOf(input: RouteInput, values: Partial<Record<Part, unknown>>): string {
  const params = (values.params ?? {}) as Record<string, unknown>;
  const path = input.path.replace(/:(\w+)/g, (_, name: string) => encode(params[name] ?? 'x'));
  const query = Object.entries((values.query ?? {}) as Record<string, unknown>)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .join('&');
  return query ? `${path}?${query}` : path;
}
