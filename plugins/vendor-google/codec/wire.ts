// The parts of Gemini's generateContent wire format this adapter reads and writes
// (https://ai.google.dev/api/generate-content). Everything is optional on the way in:
// the decoders never trust the upstream's JSON to be complete.

export interface GeminiFunctionCall {
  id?: string;
  name?: string;
  args?: Record<string, unknown> | null;
}

export interface GeminiPart {
  text?: string;
  /** True on a thought summary (only sent with thinkingConfig.includeThoughts). */
  thought?: boolean;
  /** Opaque signature over the model's thinking; Gemini 3 wants it back on function calls. */
  thoughtSignature?: string;
  functionCall?: GeminiFunctionCall;
  functionResponse?: { name: string; response: Record<string, unknown> };
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  /** Code the model ran with the code_execution tool (language PYTHON). */
  executableCode?: { language?: string; code?: string };
  /** What that code printed; outcome OUTCOME_OK, OUTCOME_FAILED or OUTCOME_DEADLINE_EXCEEDED. */
  codeExecutionResult?: { outcome?: string; output?: string };
}

export interface GeminiContent {
  role?: 'user' | 'model';
  parts?: GeminiPart[];
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiCandidate {
  content?: GeminiContent;
  finishReason?: string;
  index?: number;
}

/** One generateContent answer, and one SSE frame of streamGenerateContent?alt=sse. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Only in an in-stream error frame. */
  error?: GeminiErrorDetail;
}

/** Google's error body: {"error": {"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED"}}. */
export interface GeminiErrorDetail {
  code?: number;
  message?: string;
  status?: string;
  details?: Array<{ reason?: string }>;
}
