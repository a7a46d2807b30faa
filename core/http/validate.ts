// Validates a value against a TypeBox schema and throws a 400 naming the first problem by
// JSON pointer. Compiled validators are cached per schema.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
// Registers the uuid and date-time formats the schemas use before any check runs.
import './formats.ts';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checkerFor(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

// TypeBox's wording, said the way a person reading an API error expects.
const PLAIN: Record<string, string> = {
  'Unexpected property': 'unknown field',
  'Expected required property': 'is required',
};

function plainMessage(message: string): string {
  return PLAIN[message] ?? message.charAt(0).toLowerCase() + message.slice(1);
}

/** Errors that say the value is of another type than the schema wants (not a broken constraint). */
const TYPE_MISMATCH = new Set<ValueErrorType>([
  ValueErrorType.Array, ValueErrorType.Boolean, ValueErrorType.Integer, ValueErrorType.Literal, ValueErrorType.Null,
  ValueErrorType.Number, ValueErrorType.Object, ValueErrorType.String, ValueErrorType.Undefined, ValueErrorType.Union,
]);

/**
 * The most precise of a value's errors: the deepest path; at one path, a missing or unknown
 * field before anything else, and a broken constraint (too long, too many items) before a type
 * mismatch. A union's own error ("expected union value") is replaced by its variants' errors, so
 * a list of 6,000 ids against '*' | id[] says the list is too long, not that it is no union.
 */
export function mostPreciseError(errors: Iterable<ValueError>): ValueError | null {
  // A union's own error ranks last: its variants' errors at the same path say more.
  const rank = (e: ValueError) => (e.type === ValueErrorType.Union ? -1
    : e.type === ValueErrorType.ObjectRequiredProperty || e.type === ValueErrorType.ObjectAdditionalProperties ? 2 : TYPE_MISMATCH.has(e.type) ? 0 : 1);
  let best: ValueError | null = null;
  const consider = (e: ValueError) => {
    if (!best || e.path.length > best.path.length || (e.path.length === best.path.length && rank(e) > rank(best))) best = e;
    if (e.type === ValueErrorType.Union) for (const inner of unionVariantErrors(e)) consider(inner);
  };
  for (const e of errors) consider(e);
  return best;
}

const depth = (path: string) => (path === '' ? 0 : path.split('/').length - 1);

/**
 * The errors of a union's variants that the value does not contradict on a literal field (a
 * discriminator such as `mode: "vertex"`): those say what is wrong in the variant meant. When
 * the value contradicts every variant, only those literal fields are wrong.
 */
function unionVariantErrors(union: ValueError): ValueError[] {
  const variants = union.errors.map((variant) => [...variant]);
  const isDiscriminator = (e: ValueError) => e.type === ValueErrorType.Literal && depth(e.path) === depth(union.path) + 1;
  const meant = variants.filter((errors) => !errors.some(isDiscriminator));
  return meant.length > 0 ? meant.flat() : variants.flat().filter(isDiscriminator);
}

/** Returns the first problem as `{ pointer, message }`, or null when valid. */
export function firstProblem(schema: TSchema, value: unknown, prefix = ''): { pointer: string; message: string } | null {
  const check = checkerFor(schema);
  if (check.Check(value)) return null;
  const best = mostPreciseError(check.Errors(value));
  if (!best) return { pointer: prefix || '/', message: 'is invalid' };
  return { pointer: `${prefix}${best.path}` || '/', message: plainMessage(best.message) };
}

/** Throws RELAY_ERR_BAD_REQUEST naming the JSON pointer of the first invalid field. */
export function validateBody<T>(schema: TSchema, value: unknown, prefix = ''): T {
  const problem = firstProblem(schema, value, prefix);
  if (problem) {
    const pointer = echoedName(problem.pointer); // it holds the caller's keys
    throw new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: ${problem.message}`, { field: pointer });
  }
  return value as T;
}
