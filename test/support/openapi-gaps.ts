// Where OpenAI's published OpenAPI description lags what its servers send, patched for the test
// validator only: a streamed custom tool call. ChatCompletionMessageToolCallChunk knows only
// `type: "function"` (openai/openai-openapi#576, open); OpenAI streams a custom tool's call as
// `type: "custom"` with `custom: {name, input}` pieces, as openai-node types and accumulates it
// (ChatCompletionChunk.Choice.Delta.ToolCall, commit 6fa9152e, PR #2023).

interface ToolCallChunkSchema { properties: { type: { enum: string[] }; custom?: unknown } }

/** The description's component schemas with the gaps above filled (changed in place). */
export function withKnownGaps(schemas: Record<string, unknown>): Record<string, unknown> {
  const chunk = schemas.ChatCompletionMessageToolCallChunk as ToolCallChunkSchema;
  chunk.properties.type.enum = ['function', 'custom'];
  chunk.properties.custom = { type: 'object', properties: { name: { type: 'string' }, input: { type: 'string' } } };
  return schemas;
}
