// Semantic features of a canonical request. A feature "survives" a translation when its probe
// gives the same value before and after; the conformance suite pins which features each
// inbound -> upstream pair loses.
import type { CanonicalRequest, ContentPart, Tool } from '../../core/plugin-api/canonical.ts';
import { TOOL_ERROR_MARKER } from '../../core/plugin-api/canonical.ts';
import { normalizeArguments } from './harness.ts';

const texts = (parts: ContentPart[]): string[] => parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
const conversation = (r: CanonicalRequest) => r.messages.filter((m) => m.role !== 'system');
const parts = (r: CanonicalRequest): ContentPart[] => conversation(r).flatMap((m) => m.content);
/** A tool result's text; an upstream without an error flag marks an error in the text (markedToolResultContent). */
const resultText = (p: Extract<ContentPart, { type: 'tool_result' }>): string => {
  const text = texts(p.content as ContentPart[]).join('');
  return text.startsWith(TOOL_ERROR_MARKER) ? text.slice(TOOL_ERROR_MARKER.length) : text;
};
/** Function tools, leaving out the function a custom tool becomes on upstreams without custom tools. */
const functionTools = (r: CanonicalRequest) => (r.tools ?? []).filter((t): t is Extract<Tool, { type: 'function' }> =>
  t.type === 'function' && JSON.stringify(t.parameters?.properties) !== JSON.stringify({ input: { type: 'string', description: 'The raw input for the tool.' } }));

export const REQUEST_PROBES: Record<string, (r: CanonicalRequest) => unknown> = {
  'system prompt': (r) => [...(r.system ?? []).map((p) => p.text), ...r.messages.filter((m) => m.role === 'system').flatMap((m) => texts(m.content))].join('\n\n'),
  'system prompt parts': (r) => (r.system ?? []).length,
  'system message position': (r) => r.messages.filter((m) => m.role === 'system').length,
  conversation: (r) => conversation(r).flatMap((m) => m.content.flatMap((p) => {
    if (p.type === 'text') return [`${m.role}: ${p.text}`];
    if (p.type === 'refusal') return [`${m.role} refused: ${p.text}`];
    if (p.type === 'tool_call') return [`call ${p.id} ${p.name}`];
    if (p.type === 'tool_result') return [`result ${p.tool_call_id}: ${resultText(p)}`];
    return [];
  })),
  'tool call arguments': (r) => parts(r).filter((p) => p.type === 'tool_call').map((p) => normalizeArguments((p as { arguments: string }).arguments)),
  'tool result errors': (r) => parts(r).filter((p) => p.type === 'tool_result')
    .map((p) => (p as { is_error?: boolean }).is_error === true || texts((p as { content: ContentPart[] }).content).join('').startsWith(TOOL_ERROR_MARKER)),
  images: (r) => parts(r).filter((p) => p.type === 'image').map((p) => JSON.stringify((p as { source: unknown }).source)),
  'image detail': (r) => parts(r).filter((p) => p.type === 'image').map((p) => (p as { detail?: string }).detail ?? 'auto'),
  'reasoning history': (r) => parts(r).filter((p) => p.type === 'reasoning').map((p) => JSON.stringify(p)),
  'function tools': (r) => functionTools(r).map((t) => `${t.name} ${JSON.stringify(t.parameters ?? null)} ${t.description ?? ''}`),
  'custom tools': (r) => [
    ...(r.tools ?? []).filter((t) => t.type === 'custom').map((t) => `tool ${t.name} ${JSON.stringify(t.format ?? null)}`),
    ...parts(r).filter((p) => p.type === 'tool_call' && p.tool_kind === 'custom').map((p) => `call ${(p as { id: string }).id}`),
  ],
  'tool strict flag': (r) => functionTools(r).map((t) => t.strict ?? false),
  tool_choice: (r) => (r.tools && r.tools.length > 0 ? r.tool_choice ?? 'auto' : null),
  parallel_tool_calls: (r) => r.parallel_tool_calls ?? true,
  stop: (r) => r.stop ?? [],
  max_output_tokens: (r) => r.max_output_tokens ?? null,
  temperature: (r) => r.temperature ?? null,
  top_p: (r) => r.top_p ?? null,
  'reasoning effort': (r) => r.reasoning?.effort ?? null,
  'reasoning budget': (r) => r.reasoning?.budget_tokens ?? null,
  'reasoning summary': (r) => r.reasoning?.summary ?? false,
  'response format': (r) => (r.response_format ? `${r.response_format.type} ${r.response_format.type === 'json_schema' ? JSON.stringify(r.response_format.schema) : ''}` : null),
  'response format name and strict': (r) => (r.response_format?.type === 'json_schema' ? `${r.response_format.name} ${String(r.response_format.strict ?? false)}` : null),
  metadata: (r) => r.metadata ?? null,
  user: (r) => r.user ?? null,
};

const absent = (value: unknown): boolean =>
  value === null || value === false || value === 0 || value === '' || (Array.isArray(value) && value.length === 0);

/**
 * Names of the probes whose value the request had and lost or changed on the way. A value that
 * only appears after (a default such as Anthropic's required max_tokens) is not a loss.
 */
export function lostFeatures(before: CanonicalRequest, after: CanonicalRequest): string[] {
  return Object.entries(REQUEST_PROBES)
    .filter(([, probe]) => !absent(probe(before)) && JSON.stringify(probe(before)) !== JSON.stringify(probe(after)))
    .map(([name]) => name)
    .sort();
}
