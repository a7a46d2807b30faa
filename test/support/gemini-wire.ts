// Gemini's generateContent request on the test side: a TypeBox description of the wire
// (https://ai.google.dev/api/generate-content, the fields Relay writes, every one of them
// checked: Google refuses unknown fields) and a reader back to canonical, as Gemini reads it:
// function responses pair with calls by name, in order (ids are Gemini's own business).
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { CanonicalRequest, ContentPart, Message, Tool, ToolChoice } from '../../core/plugin-api/canonical.ts';
import { EFFORT_BUDGETS } from '../../plugins/vendor-google/codec/index.ts';

const Json = Type.Unknown();
const Part = Type.Object({
  text: Type.Optional(Type.String()),
  thought: Type.Optional(Type.Boolean()),
  thoughtSignature: Type.Optional(Type.String()),
  inlineData: Type.Optional(Type.Object({ mimeType: Type.String(), data: Type.String() }, { additionalProperties: false })),
  fileData: Type.Optional(Type.Object({ mimeType: Type.String(), fileUri: Type.String() }, { additionalProperties: false })),
  functionCall: Type.Optional(Type.Object({ name: Type.String({ minLength: 1 }), args: Type.Record(Type.String(), Json) }, { additionalProperties: false })),
  functionResponse: Type.Optional(Type.Object({ name: Type.String({ minLength: 1 }), response: Type.Record(Type.String(), Json) }, { additionalProperties: false })),
}, { additionalProperties: false, minProperties: 1 });

export const GenerateContentRequest = Type.Object({
  contents: Type.Array(Type.Object({ role: Type.Union([Type.Literal('user'), Type.Literal('model')]), parts: Type.Array(Part, { minItems: 1 }) }, { additionalProperties: false })),
  systemInstruction: Type.Optional(Type.Object({ parts: Type.Array(Type.Object({ text: Type.String() }, { additionalProperties: false }), { minItems: 1 }) }, { additionalProperties: false })),
  tools: Type.Optional(Type.Array(Type.Object({
    functionDeclarations: Type.Array(Type.Object({
      name: Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$' }),
      description: Type.Optional(Type.String()),
      parametersJsonSchema: Type.Optional(Json),
      parameters: Type.Optional(Json),
    }, { additionalProperties: false })),
  }, { additionalProperties: false }), { maxItems: 1 })),
  toolConfig: Type.Optional(Type.Object({
    functionCallingConfig: Type.Object({
      mode: Type.Union([Type.Literal('AUTO'), Type.Literal('ANY'), Type.Literal('NONE')]),
      allowedFunctionNames: Type.Optional(Type.Array(Type.String())),
    }, { additionalProperties: false }),
  }, { additionalProperties: false })),
  generationConfig: Type.Optional(Type.Object({
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 5 })),
    responseMimeType: Type.Optional(Type.Literal('application/json')),
    responseJsonSchema: Type.Optional(Json),
    responseSchema: Type.Optional(Json),
    thinkingConfig: Type.Optional(Type.Object({ thinkingBudget: Type.Optional(Type.Integer({ minimum: -1 })), includeThoughts: Type.Optional(Type.Boolean()) }, { additionalProperties: false })),
  }, { additionalProperties: false })),
}, { additionalProperties: false });

const checkRequest = TypeCompiler.Compile(GenerateContentRequest);

/** Where a body departs from Gemini's generateContent request (first three problems). */
export function geminiRequestProblems(body: unknown): string[] {
  return [...checkRequest.Errors(body)].slice(0, 3).map((e) => `${e.path} ${e.message}`);
}

function resultText(response: Record<string, unknown>): { text: string; isError: boolean } {
  const keys = Object.keys(response);
  if (keys.length === 1 && keys[0] === 'error' && typeof response.error === 'string') return { text: response.error, isError: true };
  if (keys.length === 1 && keys[0] === 'output' && typeof response.output === 'string') return { text: response.output, isError: false };
  return { text: JSON.stringify(response), isError: false };
}

const BUDGET_EFFORTS = new Map(Object.entries(EFFORT_BUDGETS).map(([effort, budget]) => [budget, effort]));

/** A generateContent request read back into canonical, the way Gemini understands it. */
export function readGeminiRequest(body: any, model = 'upstream-model'): CanonicalRequest {
  const pending = new Map<string, string[]>();
  let calls = 0;
  const messages: Message[] = (body.contents ?? []).map((content: any): Message => ({
    role: content.role === 'model' ? 'assistant' : 'user',
    content: (content.parts ?? []).flatMap((part: any): ContentPart[] => {
      if (part.functionCall) {
        const id = `gemini_call_${++calls}`;
        pending.set(part.functionCall.name, [...(pending.get(part.functionCall.name) ?? []), id]);
        return [{ type: 'tool_call', id, name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) }];
      }
      if (part.functionResponse) {
        const queue = pending.get(part.functionResponse.name) ?? [];
        const { text, isError } = resultText(part.functionResponse.response ?? {});
        return [{ type: 'tool_result', tool_call_id: queue.shift() ?? `unanswered ${part.functionResponse.name}`, content: [{ type: 'text', text }], ...(isError ? { is_error: true } : {}) }];
      }
      if (part.inlineData) return [{ type: 'image', source: { type: 'base64', media_type: part.inlineData.mimeType, data: part.inlineData.data } }];
      if (part.fileData) return [{ type: 'image', source: { type: 'url', url: part.fileData.fileUri } }];
      if (typeof part.text === 'string') return [{ type: 'text', text: part.text }];
      return [];
    }),
  }));
  const request: CanonicalRequest = { model, messages };
  if (body.systemInstruction) request.system = body.systemInstruction.parts.map((p: { text: string }) => ({ type: 'text', text: p.text }));
  const declarations = body.tools?.[0]?.functionDeclarations;
  if (declarations) {
    request.tools = declarations.map((d: any): Tool => ({
      type: 'function', name: d.name, ...(d.description === undefined ? {} : { description: d.description }),
      ...(d.parametersJsonSchema === undefined ? {} : { parameters: d.parametersJsonSchema }),
    }));
  }
  const fc = body.toolConfig?.functionCallingConfig;
  if (fc) {
    const choice: ToolChoice = fc.mode === 'NONE' ? 'none' : fc.mode === 'AUTO' ? 'auto'
      : fc.allowedFunctionNames?.length === 1 ? { type: 'tool', name: fc.allowedFunctionNames[0] } : 'required';
    request.tool_choice = choice;
  }
  const g = body.generationConfig ?? {};
  if (g.maxOutputTokens !== undefined) request.max_output_tokens = g.maxOutputTokens;
  if (g.temperature !== undefined) request.temperature = g.temperature;
  if (g.topP !== undefined) request.top_p = g.topP;
  if (g.stopSequences) request.stop = g.stopSequences;
  if (g.responseMimeType === 'application/json') {
    request.response_format = g.responseJsonSchema ? { type: 'json_schema', name: 'response', schema: g.responseJsonSchema } : { type: 'json_object' };
  }
  const thinking = g.thinkingConfig;
  if (thinking) {
    const effort = BUDGET_EFFORTS.get(thinking.thinkingBudget);
    // Gemini has only a budget: the effort it stands for when it is one of the effort budgets.
    request.reasoning = {
      ...(effort ? { effort: effort as never } : {}),
      ...(thinking.thinkingBudget === -1 || thinking.thinkingBudget === undefined ? {} : { budget_tokens: thinking.thinkingBudget }),
      ...(thinking.includeThoughts ? { summary: true } : {}),
    };
  }
  return request;
}
