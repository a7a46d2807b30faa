// The parts of Cohere's v2 Chat API this adapter reads and writes
// (https://docs.cohere.com/reference/chat). Everything is optional on the way in: the decoders
// never trust the upstream's JSON to be complete.

export type CohereContent = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } } | { type: 'thinking'; thinking: string };

export interface CohereToolCall {
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export type CohereMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | CohereContent[] }
  | { role: 'assistant'; content?: string | CohereContent[]; tool_calls?: CohereToolCall[]; tool_plan?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

/** A v2 chat answer. */
export interface CohereResponse {
  id?: string;
  finish_reason?: string;
  message?: { role?: string; content?: Array<Partial<CohereContent> & { type?: string }>; tool_plan?: string; tool_calls?: CohereToolCall[] };
  usage?: CohereUsage;
}

/** One stream event: `type` names it (message-start, content-delta, tool-call-start, message-end, ...). */
export interface CohereStreamEvent {
  type?: string;
  id?: string;
  index?: number;
  delta?: {
    message?: {
      content?: { type?: string; text?: string; thinking?: string };
      tool_plan?: string;
      tool_calls?: CohereToolCall;
    };
    finish_reason?: string;
    usage?: CohereUsage;
    error?: string;
  };
}
