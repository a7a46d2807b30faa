// VendorAdapter.countTokens for OpenAI: the prompt counted by OpenAI's token counter (POST
// /v1/responses/input_tokens), which takes Responses input. A Responses request is counted as it
// was sent; any other (a Chat Completions body) is counted as the Responses request Relay would
// make of its canonical form. The kernel asks when an answer was cut before its usage came (a
// Codex turn interrupted mid-stream) or a prompt is near a model's window. Not counted: a provider
// narrowed to shapes without the counter, and a server that answers anything but a count (null).
import { readUpstreamBody, sendToHost, type UpstreamRequest } from '../../core/plugin-api.ts';
import type { CanonicalRequest } from '../../core/plugin-api/canonical.ts';
import { openaiPath } from './base-url.ts';
import { COUNTED, inputTokensUpstream } from './codec/input-tokens.ts';

/** A count's answer is `{"object": "response.input_tokens", "input_tokens": n}`: anything near this size is not one. */
const MAX_COUNT_BYTES = 64 * 1024;

export async function countOpenAITokens(req: UpstreamRequest, prompt?: () => CanonicalRequest): Promise<number | null> {
  if (!req.route.shapes.includes('openai.input_tokens')) return null;
  const counted = req.shape === 'openai.responses' ? countedMembers(req.body) : prompt ? inputTokensUpstream.encodeRequest(prompt(), req.route) : null;
  if (counted === null) return null;
  const path = openaiPath(req.route.host.spec.baseUrl, '/responses/input_tokens');
  const res = await sendToHost({ ...req, shape: 'openai.input_tokens', body: JSON.stringify(counted), stream: false }, path, (key) => ({ authorization: `Bearer ${key}` }));
  const read = await readUpstreamBody(res.body, MAX_COUNT_BYTES);
  if (res.status !== 200 || read.truncated) return null;
  try {
    const tokens = (JSON.parse(read.bytes.toString('utf8')) as { input_tokens?: unknown }).input_tokens;
    return typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : null;
  } catch {
    return null;
  }
}

/** What the counter takes of a Responses body as it was sent, or null when it is not JSON. */
function countedMembers(body: string | Buffer): Record<string, unknown> | null {
  let sent: Record<string, unknown>;
  try {
    sent = JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
  const counted: Record<string, unknown> = {};
  for (const member of COUNTED) if (sent[member] !== undefined) counted[member] = sent[member];
  return counted;
}
