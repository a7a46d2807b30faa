// Validates values against component schemas of OpenAI's published OpenAPI description
// (test/fixtures/openai-openapi/, vendored with its MIT license so that a fresh clone's tests pass).
// The document is parsed once per process; each named schema is compiled on first use.
//
// The description is OpenAPI 3.1 with some 3.0 leftovers: `nullable: true` is rewritten to
// `anyOf [schema, null]`, and OpenAPI-only keywords (discriminator, x-*) are ignored. `oneOf`
// is read as `anyOf`: OpenAI's unions rely on a discriminator to pick one branch, and several
// of their branches overlap (an input message matches both EasyInputMessage and Message).
// Where the description lags OpenAI's servers, openapi-gaps.ts says how and fills the gap.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { withKnownGaps } from './openapi-gaps.ts';

/** OpenAI's OpenAPI description, vendored inside the repository (never read from outside it). */
export const OPENAI_OPENAPI_PATH = fileURLToPath(new URL('../fixtures/openai-openapi/openai-openapi.yaml', import.meta.url));
const DOC_ID = 'openai-openapi';

let ajv: Ajv2020 | null = null;
const validators = new Map<string, ValidateFunction>();

/** `nullable: true` (OpenAPI 3.0) -> `anyOf: [schema, {type: null}]`, and oneOf -> anyOf, recursively. */
function rewriteNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rewriteNullable);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = rewriteNullable(value);
  if (Array.isArray(out.oneOf)) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  if (out.nullable === true) {
    delete out.nullable;
    const { description, ...rest } = out;
    return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] };
  }
  delete out.nullable;
  return out;
}

function instance(): Ajv2020 {
  if (ajv) return ajv;
  const doc = parse(readFileSync(OPENAI_OPENAPI_PATH, 'utf8')) as { components: { schemas: Record<string, unknown> } };
  const schemas = withKnownGaps(rewriteNullable(doc.components.schemas) as Record<string, unknown>);
  const a = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, discriminator: false });
  addFormats.default(a);
  for (const format of ['unixtime', 'int64', 'int32', 'double', 'float', 'binary', 'byte']) {
    a.addFormat(format, true);
  }
  a.addSchema({ $id: DOC_ID, components: { schemas } });
  ajv = a;
  return a;
}

function validatorFor(name: string): ValidateFunction {
  let validate = validators.get(name);
  if (!validate) {
    validate = instance().compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
    validators.set(name, validate);
  }
  return validate;
}

/** Problems of `value` against the named component schema; empty when valid. */
export function openapiProblems(name: string, value: unknown): string[] {
  const validate = validatorFor(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params)}`);
}

/** The component schema named after a Responses stream event type (`response.completed` -> ResponseCompletedEvent). */
export function responseStreamEventSchema(type: string): string {
  const known: Record<string, string> = {
    'response.created': 'ResponseCreatedEvent',
    'response.in_progress': 'ResponseInProgressEvent',
    'response.completed': 'ResponseCompletedEvent',
    'response.failed': 'ResponseFailedEvent',
    'response.incomplete': 'ResponseIncompleteEvent',
    'response.output_item.added': 'ResponseOutputItemAddedEvent',
    'response.output_item.done': 'ResponseOutputItemDoneEvent',
    'response.content_part.added': 'ResponseContentPartAddedEvent',
    'response.content_part.done': 'ResponseContentPartDoneEvent',
    'response.output_text.delta': 'ResponseTextDeltaEvent',
    'response.output_text.done': 'ResponseTextDoneEvent',
    'response.refusal.delta': 'ResponseRefusalDeltaEvent',
    'response.refusal.done': 'ResponseRefusalDoneEvent',
    'response.function_call_arguments.delta': 'ResponseFunctionCallArgumentsDeltaEvent',
    'response.function_call_arguments.done': 'ResponseFunctionCallArgumentsDoneEvent',
    'response.custom_tool_call_input.delta': 'ResponseCustomToolCallInputDeltaEvent',
    'response.custom_tool_call_input.done': 'ResponseCustomToolCallInputDoneEvent',
    'response.reasoning_summary_part.added': 'ResponseReasoningSummaryPartAddedEvent',
    'response.reasoning_summary_part.done': 'ResponseReasoningSummaryPartDoneEvent',
    'response.reasoning_summary_text.delta': 'ResponseReasoningSummaryTextDeltaEvent',
    'response.reasoning_summary_text.done': 'ResponseReasoningSummaryTextDoneEvent',
    'response.reasoning_text.delta': 'ResponseReasoningTextDeltaEvent',
    'response.reasoning_text.done': 'ResponseReasoningTextDoneEvent',
    'response.web_search_call.in_progress': 'ResponseWebSearchCallInProgressEvent',
    'response.web_search_call.searching': 'ResponseWebSearchCallSearchingEvent',
    'response.web_search_call.completed': 'ResponseWebSearchCallCompletedEvent',
    'response.output_text.annotation.added': 'ResponseOutputTextAnnotationAddedEvent',
    error: 'ResponseErrorEvent',
  };
  const name = known[type];
  if (!name) throw new Error(`no OpenAPI schema known for Responses stream event ${type}`);
  return name;
}
