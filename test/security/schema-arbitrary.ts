// fast-check arbitraries from the JSON Schemas of an OpenAPI document (what TypeBox emits:
// type, properties, required, additionalProperties, min/max, minLength/maxLength, pattern, format,
// const, enum, anyOf/oneOf, items). `valid` values follow the schema; `hostile` ones follow it
// mostly but, at any node, may put a value of the wrong type, a huge string, an unknown field, an
// object nested thousands of levels deep; `deepFreeFormFor` ones follow it with every free-form value
// (where a schema takes any member) nested thousands of levels deep.
import fc from 'fast-check';

export type Schema = Record<string, any>;

export interface SchemaContext {
  /** Existing entity ids, so that uuid fields sometimes name something real. */
  ids: string[];
}

// An object nested 5,000 levels deep ({"a":{"a":...}}), the right type for any free-form object
// field. JSON.stringify would overflow the stack on it, so values carry a placeholder string that
// `toJsonText` replaces with the text.
const DEEP_PLACEHOLDER = '@@nested-5000@@';
const DEEP_TEXT = '{"a":'.repeat(5_000) + '{}' + '}'.repeat(5_000);

const WRONG: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.string({ maxLength: 20 }), fc.constant(''),
  fc.constant([]), fc.constant({}), fc.constant(-1), fc.constant(Number.MAX_SAFE_INTEGER + 2), fc.constant(1e308),
  fc.constant('x'.repeat(100_000)), fc.constant('\u0000\ud800'), fc.constant('../../etc/passwd'), fc.constant("' OR 1=1 --"),
  fc.jsonValue({ maxDepth: 2 }), fc.constant(DEEP_PLACEHOLDER),
);

function stringOf(schema: Schema, ctx: SchemaContext): fc.Arbitrary<string> {
  if (schema.format === 'uuid') return ctx.ids.length > 0 ? fc.oneof(fc.constantFrom(...ctx.ids), fc.uuid()) : fc.uuid();
  if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 200));
  const minLength = schema.minLength ?? 0;
  return fc.string({ minLength, maxLength: Math.max(minLength, Math.min(schema.maxLength ?? 30, 30)) });
}

/** valid: follows the schema; hostile: breaks it anywhere, sometimes; deep: valid, every member present, every free-form value nested 5,000 deep. */
type Mode = 'valid' | 'hostile' | 'deep';

function build(schema: Schema | undefined, ctx: SchemaContext, mode: Mode, depth: number): fc.Arbitrary<unknown> {
  const exact = exactly(schema, ctx, mode, depth);
  return mode === 'hostile' ? fc.oneof({ weight: 6, arbitrary: exact }, { weight: 1, arbitrary: WRONG }) : exact;
}

/** A schema that takes any value (TypeBox's Unknown). */
function isUntyped(schema: Schema | undefined): boolean {
  return !schema || (schema.type === undefined && !schema.anyOf && !schema.oneOf && !('const' in schema) && !schema.enum);
}

/** The schema of an object's unnamed members (TypeBox's Record), or undefined when it names them all. */
function memberSchema(schema: Schema): Schema | undefined {
  if (schema.properties !== undefined || schema.additionalProperties === false) return undefined;
  const patterns = Object.values((schema.patternProperties ?? {}) as Record<string, Schema>);
  if (patterns.length > 0) return patterns[0];
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties as Schema : {};
}

function exactly(schema: Schema | undefined, ctx: SchemaContext, mode: Mode, depth: number): fc.Arbitrary<unknown> {
  if (mode === 'deep' && isUntyped(schema)) return fc.constant(DEEP_PLACEHOLDER);
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 1 });
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (union) return fc.oneof(...union.map((s) => build(s, ctx, mode, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string': return stringOf(schema, ctx);
    case 'integer': return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': return fc.array(build(schema.items as Schema, ctx, mode, depth + 1), { minLength: mode === 'deep' ? 1 : 0, maxLength: 3 });
    case 'object': {
      const members = mode === 'deep' ? memberSchema(schema) : undefined;
      if (members !== undefined) {
        // The placeholder is an object of objects: any member that takes any value takes it whole.
        if (isUntyped(members)) return fc.constant(DEEP_PLACEHOLDER);
        return fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,9}$/), build(members, ctx, mode, depth + 1), { minKeys: 1, maxKeys: 2 });
      }
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const shape = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, build(s, ctx, mode, depth + 1)]));
      const requiredKeys = mode === 'deep' ? Object.keys(props) : (schema.required ?? []) as string[];
      const record = fc.record(shape, { requiredKeys }) as fc.Arbitrary<Record<string, unknown>>;
      if (mode !== 'hostile') return record;
      return fc.tuple(record, fc.option(fc.tuple(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 })), { freq: 8 }))
        .map(([r, extra]) => (extra ? { ...r, [extra[0]]: extra[1] } : r));
    }
    default: return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Values that satisfy `schema` (as far as these keywords go). */
export function validFor(schema: Schema | undefined, ctx: SchemaContext): fc.Arbitrary<unknown> {
  return build(schema, ctx, 'valid', 0);
}

/** Values that mostly follow `schema` but break it anywhere, sometimes. */
export function hostileFor(schema: Schema | undefined, ctx: SchemaContext): fc.Arbitrary<unknown> {
  return build(schema, ctx, 'hostile', 0);
}

/** Valid values with every member present and every free-form value (a Record, an Unknown) nested 5,000 deep. */
export function deepFreeFormFor(schema: Schema | undefined, ctx: SchemaContext): fc.Arbitrary<unknown> {
  return build(schema, ctx, 'deep', 0);
}

/** A generated value as JSON text, deeply nested objects in place of their placeholders. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value).replaceAll(`"${DEEP_PLACEHOLDER}"`, DEEP_TEXT);
}
