// Validates a value against a TypeBox schema and throws a 400 naming the first problem by
// JSON pointer. Compiled validators are cached per schema.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { RelayError } from '../errors.ts';
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

/** Returns the first problem as `{ pointer, message }`, or null when valid. */
export function firstProblem(schema: TSchema, value: unknown, prefix = ''): { pointer: string; message: string } | null {
  const check = checkerFor(schema);
  if (check.Check(value)) return null;
  // Prefer the deepest error: unions report a generic error at the union and precise ones below.
  let best: { path: string; message: string } | null = null;
  for (const e of check.Errors(value)) {
    if (!best || e.path.length > best.path.length) best = { path: e.path, message: e.message };
  }
  if (!best) return { pointer: prefix || '/', message: 'is invalid' };
  return { pointer: `${prefix}${best.path}` || '/', message: plainMessage(best.message) };
}

/** Throws RELAY_ERR_BAD_REQUEST naming the JSON pointer of the first invalid field. */
export function validateBody<T>(schema: TSchema, value: unknown, prefix = ''): T {
  const problem = firstProblem(schema, value, prefix);
  if (problem) {
    throw new RelayError('RELAY_ERR_BAD_REQUEST', `${problem.pointer}: ${problem.message}`, { field: problem.pointer });
  }
  return value as T;
}
