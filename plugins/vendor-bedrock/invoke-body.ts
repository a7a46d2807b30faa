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
