// VendorAdapter.countTokens for Bedrock: CountTokens (POST /model/{id}/count-tokens) counts a
// Converse request (input.converse: what of it CountTokens takes) or an Anthropic Messages one
// (input.invokeModel: the InvokeModel body). The kernel asks when an answer was cut before its
// usage came (ConverseStream reports usage only in its last event: a Codex turn on Bedrock
// interrupted mid-stream) and when a prompt is near a model's window. Not counted: a provider whose
// shapes leave out anthropic.count_tokens (narrowed to the models CountTokens does not serve), and
// an answer without a count (null).
import type { UpstreamRequest, UpstreamResponse } from '../../core/plugin-api.ts';
import { CONVERSE_SHAPE, COUNTING_SHAPE, MESSAGES_SHAPE } from './codec/index.ts';
import { countTokensBody, readInputTokens } from './invoke-body.ts';
import { headerValue } from './header-value.ts';

/** The members of a Converse request CountTokens takes (ConverseTokensRequest). */
export const CONVERSE_COUNTED = ['messages', 'system', 'toolConfig', 'additionalModelRequestFields'];

export async function countBedrockTokens(req: UpstreamRequest, send: (body: string) => Promise<UpstreamResponse>): Promise<number | null> {
  if (!req.route.shapes.includes(COUNTING_SHAPE)) return null;
  let body: string;
  try {
    body = countBody(req);
  } catch {
    return null; // not JSON: nothing to count
  }
  if (body === '') return null;
  const res = await send(body);
  if (res.status !== 200) {
    res.body.resume();
    return null;
  }
  return readInputTokens(res);
}

/** The CountTokens body for a request as it was sent; empty for a shape it does not count. */
function countBody(req: UpstreamRequest): string {
  const text = typeof req.body === 'string' ? req.body : req.body.toString('utf8');
  if (req.shape === MESSAGES_SHAPE) return countTokensBody(text, headerValue(req.headers, 'anthropic-beta'));
  if (req.shape !== CONVERSE_SHAPE) return '';
  const sent = JSON.parse(text) as Record<string, unknown>;
  const converse = Object.fromEntries(CONVERSE_COUNTED.filter((k) => sent[k] !== undefined).map((k) => [k, sent[k]]));
  return JSON.stringify({ input: { converse } });
}
