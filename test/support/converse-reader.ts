// A Bedrock Converse request read back into the canonical shape, as the model behind Bedrock
// would understand it: how the conformance corpus checks what the Converse encoder sent
// (Converse is no client shape, so there is no inbound codec to read it with).
import type { CanonicalRequest, ContentPart, ImagePart, Message, Tool, ToolChoice } from '../../core/plugin-api/canonical.ts';
import { effortForBudget } from '../../plugins/wire-vendor-b/codec/index.ts';

type Json = Record<string, any>;

const MEDIA: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

function image(block: Json): ImagePart {
  const source = block.source as Json;
  if (source.s3Location) return { type: 'image', source: { type: 'url', url: String(source.s3Location.uri) } };
  return { type: 'image', source: { type: 'base64', media_type: MEDIA[String(block.format)] ?? 'image/png', data: String(source.bytes) } };
}

function part(block: Json): ContentPart | null {
  if (typeof block.text === 'string') return { type: 'text', text: block.text };
  if (block.image) return image(block.image as Json);
  if (block.toolUse) return { type: 'tool_call', id: String(block.toolUse.toolUseId), name: String(block.toolUse.name), arguments: JSON.stringify(block.toolUse.input ?? {}), tool_kind: 'function' };
  if (block.toolResult) {
    const r = block.toolResult as Json;
    return {
      type: 'tool_result', tool_call_id: String(r.toolUseId),
      content: (r.content as Json[]).map((c) => (typeof c.text === 'string' ? { type: 'text' as const, text: c.text } : image(c.image as Json))),
      ...(r.status === undefined ? {} : { is_error: r.status === 'error' }),
    };
  }
  if (block.reasoningContent?.reasoningText) {
    const { text, signature } = block.reasoningContent.reasoningText as Json;
    return { type: 'reasoning', origin: 'bedrock', ...(text ? { text } : {}), ...(signature ? { signature } : {}) };
  }
  if (block.reasoningContent?.redactedContent) return { type: 'reasoning', origin: 'bedrock', encrypted: String(block.reasoningContent.redactedContent) };
  return null;
}

function toolChoice(choice: Json | undefined): ToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.auto) return 'auto';
  if (choice.any) return 'required';
  return { type: 'tool', name: String(choice.tool.name) };
}

export function readConverseRequest(body: unknown, model = 'upstream-model'): CanonicalRequest {
  const b = body as Json;
  const out: CanonicalRequest = {
    model,
    messages: (b.messages as Json[]).map((m): Message => ({ role: m.role, content: (m.content as Json[]).map(part).filter((p): p is ContentPart => p !== null) })),
  };
  if (Array.isArray(b.system)) out.system = (b.system as Json[]).map((s) => ({ type: 'text', text: String(s.text) }));
  const inference = (b.inferenceConfig ?? {}) as Json;
  if (inference.maxTokens !== undefined) out.max_output_tokens = inference.maxTokens;
  if (inference.temperature !== undefined) out.temperature = inference.temperature;
  if (inference.topP !== undefined) out.top_p = inference.topP;
  if (inference.stopSequences !== undefined) out.stop = inference.stopSequences;
  if (b.toolConfig) {
    out.tools = (b.toolConfig.tools as Json[]).map((t): Tool => ({
      type: 'function', name: String(t.toolSpec.name),
      ...(t.toolSpec.description === undefined ? {} : { description: t.toolSpec.description }),
      parameters: t.toolSpec.inputSchema.json,
      ...(t.toolSpec.strict === undefined ? {} : { strict: t.toolSpec.strict }),
    }));
    const choice = toolChoice(b.toolConfig.toolChoice as Json | undefined);
    if (choice) out.tool_choice = choice;
  }
  const thinking = b.additionalModelRequestFields?.thinking as Json | undefined;
  if (thinking?.type === 'enabled') out.reasoning = { budget_tokens: thinking.budget_tokens, effort: effortForBudget(thinking.budget_tokens) };
  if (thinking?.type === 'adaptive') out.reasoning = {};
  const schema = b.outputConfig?.textFormat?.structure?.jsonSchema as Json | undefined;
  if (schema) {
    out.response_format = { type: 'json_schema', name: String(schema.name), schema: JSON.parse(String(schema.schema)), ...(schema.description ? { description: schema.description } : {}) };
  }
  if (b.requestMetadata) {
    const { user, ...metadata } = b.requestMetadata as Record<string, string>;
    if (user !== undefined) out.user = user;
    if (Object.keys(metadata).length > 0) out.metadata = metadata;
  }
  return out;
}
