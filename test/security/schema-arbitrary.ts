// fast-check arbitraries from the JSON Schemas of an OpenAPI document (what TypeBox emits:
// type, properties, required, additionalProperties, min/max, minLength/maxLength, pattern, format,
// const, enum, anyOf/oneOf, items). `valid` values follow the schema; `hostile` ones follow it
// mostly but, at any node, may put a value of the wrong type, a huge string, an unknown field.
import fc from 'fast-check';

export type Schema = Record<string, any>;

export interface SchemaContext {
  /** Existing entity ids, so that uuid fields sometimes name something real. */
  ids: string[];
}

const WRONG: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 20 }), fc.constant(''),
  fc.constant([]), fc.constant({}), fc.constant(-1), fc.constant(Number.MAX_SAFE_INTEGER + 2), fc.constant(1e308),
  fc.constant('x'.repeat(100_000)), fc.constant('\u0000\ud800'), fc.constant('../../etc/passwd'), fc.constant("' OR 1=1 --"),
  fc.jsonValue({ maxDepth: 2 }),
);

function stringOf(schema: Schema, ctx: SchemaContext): fc.Arbitrary<string> {
  if (schema.format === 'uuid') return ctx.ids.length > 0 ? fc.oneof(fc.constantFrom(...ctx.ids), fc.uuid()) : fc.uuid();
  if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 200));
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 30, 30)) });
}

function build(schema: Schema | undefined, ctx: SchemaContext, hostile: boolean, depth: number): fc.Arbitrary<unknown> {
  const exact = exactly(schema, ctx, hostile, depth);
  return hostile ? fc.oneof({ weight: 6, arbitrary: exact }, { weight: 1, arbitrary: WRONG }) : exact;
}

function exactly(schema: Schema | undefined, ctx: SchemaContext, hostile: boolean, depth: number): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 1 });
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) return fc.oneof(...union.map((s) => build(s, ctx, hostile, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': return stringOf(schema, ctx);
    case 'integer': return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': return fc.array(build(schema.items as Schema, ctx, hostile, depth + 1), { maxLength: 3 });
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const shape = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, build(s, ctx, hostile, depth + 1)]));
      const record = fc.record(shape, { requiredKeys: (schema.required ?? []) as string[] }) as fc.Arbitrary<Record<string, unknown>>;
      if (!hostile) return record;
      return fc.tuple(record, fc.option(fc.tuple(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })), { freq: 8 }))
        .map(([r, extra]) => (extra ? { ...r, [extra[0]]: extra[1] } : r));
    }
    default: return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values that satisfy `schema` (as far as these keywords go). */
export function validFor(schema: Schema | undefined, ctx: SchemaContext): fc.Arbitrary<unknown> {
  return build(schema, ctx, false, 0);
}

/** Values that mostly follow `schema` but break it anywhere, sometimes. */
export function hostileFor(schema: Schema | undefined, ctx: SchemaContext): fc.Arbitrary<unknown> {
  return build(schema, ctx, true, 0);
}
