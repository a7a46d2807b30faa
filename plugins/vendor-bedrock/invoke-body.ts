import { Readable } from 'node:stream';
import { readUpstreamBody, type UpstreamResponse } from '../../core/plugin-api.ts';

// An Anthropic Messages request as InvokeModel takes it: no `model` (it is in the URL) and no
// `stream` (the operation says it), `anthropic_version` set to Bedrock's, and the client's
// anthropic-beta header as the `anthropic_beta` body field, narrowed to the betas Bedrock serves
// (Bedrock refuses a request naming one it does not know; Claude Code names several).

export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** Betas Bedrock's Claude models accept (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html). */
export const BEDROCK_BETAS: ReadonlySet<string> = new Set([
  'computer-use-2024-10-22', 'computer-use-2025-01-24', 'computer-use-2025-11-24', 'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14', 'output-128k-2025-02-19', 'dev-full-thinking-2025-05-14', 'context-1m-2025-08-07',
  'context-management-2025-06-27', 'effort-2025-11-24', 'tool-search-tool-2025-10-19', 'tool-examples-2025-10-29',
  'fine-grained-tool-streaming-2025-05-14',
]);

export function invokeModelBody(clientBody: Buffer | string, betaHeader: string | undefined): string {
  const json = JSON.parse(typeof clientBody === 'string' ? clientBody : clientBody.toString('utf8')) as Record<string, unknown>;
  delete json.model;
  delete json.stream;
  json.anthropic_version = BEDROCK_ANTHROPIC_VERSION;
  const asked = [
    ...(Array.isArray(json.anthropic_beta) ? json.anthropic_beta.filter((b): b is string => typeof b === 'string') : []),
    ...(betaHeader ?? '').split(',').map((b) => b.trim()),
  ];
  const betas = [...new Set(asked.filter((b) => BEDROCK_BETAS.has(b)))];
  if (betas.length > 0) json.anthropic_beta = betas;
  else delete json.anthropic_beta;
  return JSON.stringify(json);
}

/**
 * An Anthropic count_tokens request as Bedrock's CountTokens takes it: the InvokeModel body
 * (base64, a blob in AWS's JSON), with a max_tokens the Messages body needs and count_tokens has not.
 */
export function countTokensBody(clientBody: Buffer | string, betaHeader: string | undefined): string {
  const invoke = JSON.parse(invokeModelBody(clientBody, betaHeader)) as Record<string, unknown>;
  if (invoke.max_tokens === undefined) invoke.max_tokens = 1;
  return JSON.stringify({ input: { invokeModel: { body: Buffer.from(JSON.stringify(invoke)).toString('base64') } } });
}

/** A count's answer is `{"inputTokens": n}`: anything near this size is not one. */
const MAX_COUNT_BYTES = 64 * 1024;

/** CountTokens' `inputTokens`, or null when the answer holds no count. */
export async function readInputTokens(res: UpstreamResponse): Promise<number | null> {
  const read = await readUpstreamBody(res.body, MAX_COUNT_BYTES);
  if (read.truncated) return null;
  try {
    const tokens = (JSON.parse(read.bytes.toString('utf8')) as { inputTokens?: unknown }).inputTokens;
    return typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : null;
  } catch {
    return null;
  }
}

/** CountTokens' `{"inputTokens": n}` as Anthropic's `{"input_tokens": n}`. */
export async function countTokensAnswer(res: UpstreamResponse): Promise<UpstreamResponse> {
  const inputTokens = await readInputTokens(res);
  // An answer without a count is the upstream's fault: a 502 the pipeline reports as such.
  const ok = inputTokens !== null;
  const body = Buffer.from(JSON.stringify(ok
    ? { input_tokens: inputTokens }
    : { type: 'error', error: { type: 'api_error', message: 'Bedrock CountTokens answered without inputTokens' } }));
  const headers: UpstreamResponse['headers'] = { ...res.headers, 'content-type': 'application/json', 'content-length': String(body.length) };
  delete headers['content-encoding'];
  return { status: ok ? 200 : 502, headers, body: Readable.from([body]) };
}
