// The control plane's request validation: TypeBox's compiled checks instead of Fastify's Ajv
// defaults, because the listener's Ajv coerces types ("500" -> 500) and fills defaults, and a
// partial update must not have defaults filled in (they would overwrite stored values).
// Bodies are checked strictly; path and query strings are converted first (they are text).
// A failure is a 400 RELAY_ERR_BAD_REQUEST whose `field` is the JSON pointer of the problem.
// Also here: rejectUnstorableInput, the control listener's check for text Postgres cannot store
// and for nesting deeper than any route takes, which covers every control route, with or without
// a TypeBox schema.
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { RelayError } from '../errors.ts';
import { echoedName } from '../echoed-name.ts';
import '../http/formats.ts';
import { mostPreciseError } from '../http/validate.ts';

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

/** The most precise problem (see mostPreciseError). */
export function firstError(check: TypeCheck<TSchema>, value: unknown): ValueError | null {
  return mostPreciseError(check.Errors(value));
}

const PART_PREFIX: Record<string, string> = { body: '', querystring: 'query:', params: 'path:', headers: 'header:' };

/** The top-level integer properties of a params or querystring schema (those are flat). */
function integerProperties(schema: TSchema): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.keys(properties).filter((key) => properties[key].type === 'integer');
}

/**
 * Value.Convert turns text into an integer with parseInt, so "1.5" became 1 and "1e3" 1. An
 * integer parameter is kept only when the number the text denotes is that integer (as the logs
 * routes' Ajv coercion has it: "2" and "2.0" are 2); otherwise the text stays, and the check
 * answers "expected integer" for it.
 */
function convertText(schema: TSchema, integers: string[], data: unknown): unknown {
  const raw = (data ?? {}) as Record<string, unknown>;
  // Value.Convert converts in place: keep the texts it is about to truncate.
  const texts = integers.map((key) => raw[key]);
  const value = Value.Convert(schema, raw) as Record<string, unknown>;
  integers.forEach((key, i) => {
    const text = texts[i];
    if (typeof text === 'string' && (text.trim() === '' || Number(text) !== value[key])) value[key] = text;
  });
  return value;
}

export const typeboxValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = TypeCompiler.Compile(schema);
  const isText = httpPart !== 'body';
  const integers = isText ? integerProperties(schema) : [];
  const prefix = PART_PREFIX[httpPart ?? 'body'] ?? '';
  return (data: unknown) => {
    const value = isText ? convertText(schema, integers, data) : data;
    if (check.Check(value)) return { value };
    const error = firstError(check, value);
    // The path holds the caller's keys: echoed bounded, as any caller's name.
    const pointer = echoedName(`${prefix}${error?.path || '/'}`);
    return { error: new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: ${error ? describe(error) : 'is invalid'}`, { field: pointer }) };
  };
};

// Strings Postgres cannot store. A NUL character is refused by text and jsonb alike ("invalid
// byte sequence", "unsupported Unicode escape sequence"); an unpaired UTF-16 surrogate has no
// UTF-8 form, so jsonb refuses it and text columns would silently get U+FFFD instead. Either
// would surface as a 500 (or a corrupted value) deep in a store, so every control request is
// checked once, before validation, wherever the string sits: a body value or field name, a path
// parameter, a query parameter.

/** Any NUL or surrogate code unit: one native scan, and only a hit needs the closer look. */
const SUSPECT = /[\u0000\ud800-\udfff]/;

/** What is wrong with a string, or null when Postgres can store it. */
function unstorable(s: string): string | null {
  if (!SUSPECT.test(s)) return null;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0) return 'a NUL character (U+0000)';
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++; // a high surrogate followed by a low one: a well-formed pair (an emoji, say)
      continue;
    }
    return `an unpaired UTF-16 surrogate (U+${c.toString(16).toUpperCase()})`;
  }
  return null;
}

/** A JSON-pointer segment, with bad characters written as \uXXXX so the message stays printable. */
function pointerSegment(key: string): string {
  const escaped = key.replace(/~/g, '~0').replace(/\//g, '~1');
  return escaped.replace(/[\u0000\ud800-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Arrays and objects nested deeper than this are refused: far deeper than any route's body goes
 * (a catalog file applied through the API has its specs 5 levels down), and TypeBox's clone and
 * the stores recurse.
 */
export const MAX_CONTROL_NESTING = 64;

/** A container still to look into, with the way back to the root for the error's pointer. */
interface Pending {
  value: object;
  key: string;
  parent: Pending | null;
  depth: number;
}

function pointerOf(node: Pending | null, last?: string): string {
  const parts = last === undefined ? [] : [pointerSegment(last)];
  for (let n = node; n && n.parent; n = n.parent) parts.push(pointerSegment(n.key));
  return `/${parts.reverse().join('/')}`;
}

function badString(path: string, problem: string): RelayError {
  const pointer = echoedName(path);
  return new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: contains ${problem}, which is not accepted in text`, { field: pointer });
}

/**
 * Walks a parsed body, params or query object once and throws a 400 naming the first string
 * (value or field name) that Postgres could not store, or the first container nested deeper than
 * MAX_CONTROL_NESTING. Iterative, so the walk itself cannot overflow the stack; strings are
 * checked where they are met, only containers are queued.
 */
export function assertStorableInput(value: unknown, prefix: string): void {
  if (typeof value === 'string') {
    const problem = unstorable(value);
    if (problem) throw badString(`${prefix}/`, problem);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const stack: Pending[] = [{ value, key: '', parent: null, depth: 1 }];
  const visit = (parent: Pending, child: unknown, key: string | number) => {
    if (typeof child === 'string') {
      const problem = unstorable(child);
      if (problem) throw badString(`${prefix}${pointerOf(parent, String(key))}`, problem);
    } else if (child !== null && typeof child === 'object') {
      if (parent.depth >= MAX_CONTROL_NESTING) {
        const pointer = echoedName(`${prefix}${pointerOf(parent, String(key))}`);
        throw new RelayError('RELAY_ERR_BAD_REQUEST', `${pointer}: nests arrays and objects deeper than ${MAX_CONTROL_NESTING} levels`, { field: pointer });
      }
      stack.push({ value: child, key: String(key), parent, depth: parent.depth + 1 });
    }
  };
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (Array.isArray(node.value)) {
      const items: unknown[] = node.value;
      for (let i = 0; i < items.length; i++) visit(node, items[i], i);
      continue;
    }
    const record = node.value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const problem = unstorable(key);
      if (problem) throw badString(`${prefix}${pointerOf(node, key)}`, `${problem} in a field name`);
      visit(node, record[key], key);
    }
  }
}

/**
 * preValidation hook for the control listener: runs after the body is parsed and before any
 * schema (TypeBox here, Ajv on the logs routes) or handler sees the request, for every route.
 */
export async function rejectUnstorableInput(request: FastifyRequest): Promise<void> {
  if (request.body !== undefined && request.body !== null) assertStorableInput(request.body, PART_PREFIX.body);
  assertStorableInput(request.params, PART_PREFIX.params);
  assertStorableInput(request.query, PART_PREFIX.querystring);
}
