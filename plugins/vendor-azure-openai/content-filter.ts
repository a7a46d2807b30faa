// Azure's content filter in translation. Azure marks what it filtered in
// content_filter_results (per choice) and stops with finish_reason "content_filter"; OpenAI's
// codec maps that stop reason, and this adds a refusal part naming the filtered categories, so a
// client whose shape has no such stop reason (Anthropic's: "refusal") still learns why.
// Passthrough leaves Azure's annotations in the body untouched.
import type { StreamDecoder, StreamInspector, VendorAdapter } from '../../core/plugin-api.ts';

// Named through the adapter contract, which every version of the plugin API exports.
type CanonicalResponse = ReturnType<VendorAdapter['decodeResponse']>;
type StreamEvent = ReturnType<StreamDecoder['decode']>[number];

type FilterResults = Record<string, { filtered?: unknown; severity?: unknown; detected?: unknown } | undefined>;

/** The categories Azure filtered, e.g. ["violence (high)"]. */
export function filteredCategories(results: unknown): string[] {
  if (results === null || typeof results !== 'object') return [];
  const out: string[] = [];
  for (const [category, result] of Object.entries(results as FilterResults)) {
    if (result?.filtered !== true) continue;
    out.push(typeof result.severity === 'string' && result.severity !== 'safe' ? `${category} (${result.severity})` : category);
  }
  return out;
}

export function refusalText(categories: string[]): string {
  const which = categories.length > 0 ? `: ${categories.join(', ')}` : '';
  return `The output was filtered by Azure OpenAI's content filter${which}.`;
}

/** Adds the refusal part to a filtered Chat Completions response. */
export function withFilterRefusal(response: CanonicalResponse, body: unknown): CanonicalResponse {
  if (response.stop_reason !== 'content_filter' || response.content.some((p) => p.type === 'refusal')) return response;
  const choice = (body as { choices?: Array<{ content_filter_results?: unknown }> } | null)?.choices?.[0];
  return { ...response, content: [...response.content, { type: 'refusal', text: refusalText(filteredCategories(choice?.content_filter_results)) }] };
}

interface AzureChunk {
  id?: unknown;
  choices?: Array<{ content_filter_results?: unknown }>;
  usage?: unknown;
  prompt_filter_results?: unknown;
}

/** Azure's first chunk: the prompt's filter results, no choices, no id. Not a response yet. */
function isPromptAnnotation(chunk: AzureChunk): boolean {
  return chunk.prompt_filter_results !== undefined && Array.isArray(chunk.choices) && chunk.choices.length === 0 && !chunk.usage;
}

function parse(data: string): AzureChunk | null {
  if (!data.includes('filter_results')) return null;
  try {
    const chunk = JSON.parse(data) as unknown;
    return chunk !== null && typeof chunk === 'object' ? chunk as AzureChunk : null;
  } catch {
    return null;
  }
}

/** OpenAI's chat stream decoder, minus Azure's prompt annotation, plus the refusal part. */
export function filteringStreamDecoder(inner: StreamDecoder): StreamDecoder {
  const categories = new Set<string>();
  let refused = false;
  let nextIndex = 0;
  const withRefusal = (events: StreamEvent[]): StreamEvent[] => {
    const out: StreamEvent[] = [];
    for (const e of events) {
      if (e.type === 'part_start') {
        nextIndex = Math.max(nextIndex, e.index + 1);
        if (e.part.type === 'refusal') refused = true;
      }
      if (e.type === 'end' && e.stop_reason === 'content_filter' && !refused) {
        const index = nextIndex++;
        out.push(
          { type: 'part_start', index, part: { type: 'refusal' } },
          { type: 'delta', index, delta: { type: 'refusal', text: refusalText([...categories]) } },
          { type: 'part_end', index },
        );
      }
      out.push(e);
    }
    return out;
  };
  return {
    decode(event, data) {
      const chunk = parse(data);
      if (chunk && isPromptAnnotation(chunk)) return [];
      for (const c of filteredCategories(chunk?.choices?.[0]?.content_filter_results)) categories.add(c);
      return withRefusal(inner.decode(event, data));
    },
    finish: () => withRefusal(inner.finish()),
  };
}

/** OpenAI's chat inspector, with Azure's prompt annotation counted as an opening frame (failover stays possible). */
export function filteringInspector(inner: StreamInspector): StreamInspector {
  let sawOutput = false;
  return {
    inspect(event, data) {
      if (!sawOutput) {
        const chunk = parse(data);
        if (chunk && isPromptAnnotation(chunk)) return 'opening';
      }
      const kind = inner.inspect(event, data);
      if (kind === 'output') sawOutput = true;
      return kind;
    },
    usage: () => inner.usage(),
  };
}
