// The control plane's request validation: TypeBox's compiled checks instead of Fastify's Ajv
// defaults, because the listener's Ajv coerces types ("500" -> 500) and fills defaults, and a
// partial update must not have defaults filled in (they would overwrite stored values).
// Bodies are checked strictly; path and query strings are converted first (they are text).
// A failure is a 400 RELAY_ERR_BAD_REQUEST whose `field` is the JSON pointer of the problem.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import type { FastifySchemaCompiler } from 'fastify';
import { RelayError } from '../errors.ts';
import '../http/formats.ts';

function describe(error: ValueError): string {
  switch (error.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return 'unknown field';
    case ValueErrorType.ObjectRequiredProperty:
      return 'is required';
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

/** The most precise problem: the deepest path, and at one path a missing or unknown field first. */
export function firstError(check: TypeCheck<TSchema>, value: unknown): ValueError | null {
  let best: ValueError | null = null;
  const rank = (e: ValueError) => (e.type === ValueErrorType.ObjectRequiredProperty || e.type === ValueErrorType.ObjectAdditionalProperties ? 1 : 0);
  for (const e of check.Errors(value)) {
    if (!best || e.path.length > best.path.length || (e.path.length === best.path.length && rank(e) > rank(best))) best = e;
  }
  return best;
}

const PART_PREFIX: Record<string, string> = { body: '', querystring: 'query:', params: 'path:', headers: 'header:' };

export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  const isText = httpPart !== 'body';
  const prefix = PART_PREFIX[httpPart ?? 'body'] ?? '';
  return (data: unknown) => {
    const value = isText ? Value.Convert(schema, data ?? {}) : data;
    if (check.Check(value)) return { value };
    const error = firstError(check, value);
    const pointer = `${prefix}${error?.path || '/'}`;
    return { error: new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: ${error ? describe(error) : 'is invalid'}`, { field: pointer }) };
  };
};
