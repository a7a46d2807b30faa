// The parts of Bedrock's Converse wire format this adapter reads and writes
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
// Everything is optional on the way in: the decoders never trust the upstream's JSON.

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ConverseImage {
  format: ImageFormat;
  source: { bytes: string } | { s3Location: { uri: string } };
}

export interface ConverseToolUse {
  toolUseId?: string;
  name?: string;
  input?: unknown;
}

export interface ConverseReasoning {
  reasoningText?: { text?: string; signature?: string };
  redactedContent?: string;
}

export interface ConverseDocument {
  format: string;
  name: string;
  source: { bytes: string } | { s3Location: { uri: string } };
}

/** A citationsContent block of an answer: the cited text, and where in the request's documents it is from. */
export interface ConverseCitations {
  content?: Array<{ text?: string }>;
  citations?: unknown[];
}

export interface ConverseBlock {
  text?: string;
  image?: ConverseImage;
  document?: ConverseDocument;
  toolUse?: ConverseToolUse;
  toolResult?: { toolUseId: string; content: Array<{ text: string } | { image: ConverseImage }>; status?: 'success' | 'error' };
  reasoningContent?: ConverseReasoning;
  /** Answers only; read to name or map them (answer-parts.ts). */
  citationsContent?: ConverseCitations;
  video?: unknown;
  guardContent?: unknown;
}

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseBlock[];
}

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output?: { message?: { role?: string; content?: ConverseBlock[] } };
  stopReason?: string;
  usage?: ConverseUsage;
  additionalModelResponseFields?: { stop_sequence?: unknown } | null;
}

/** One ConverseStream event's payload (the event's name is the SSE event name). */
export interface ConverseStreamPayload {
  role?: string;
  contentBlockIndex?: number;
  /** Other kinds (image, ...) are named in x-relay-dropped by their key. */
  start?: { toolUse?: ConverseToolUse; [kind: string]: unknown };
  delta?: { text?: string; toolUse?: { input?: unknown }; reasoningContent?: { text?: string; signature?: string; redactedContent?: string }; [kind: string]: unknown };
  stopReason?: string;
  additionalModelResponseFields?: { stop_sequence?: unknown } | null;
  usage?: ConverseUsage;
  /** Only on the `exception` frames the adapter makes of event-stream exceptions. */
  exception?: string;
  message?: string;
}
