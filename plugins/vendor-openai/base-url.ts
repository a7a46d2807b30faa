// A host's base URL as OpenAI's SDKs take it (https://api.openai.com/v1), or a bare origin
// (https://api.openai.com, http://ollama:11434), which gets /v1 as every OpenAI-compatible server
// serves it there. A URL that already ends with an endpoint cannot work, and is refused when the host is written.

const BARE_ORIGIN = /^https?:\/\/[^/]+\/*$/;
const ENDS_WITH_ENDPOINT = /\/(chat\/completions|completions|responses|embeddings)\/*$/;

/** The path to append to the host's base URL for `endpoint` (/chat/completions). */
export function openaiPath(baseUrl: string, endpoint: string): string {
  return BARE_ORIGIN.test(baseUrl) ? `/v1${endpoint}` : endpoint;
}

export function openaiBaseUrlProblem(baseUrl: string): string | null {
  const endpoint = ENDS_WITH_ENDPOINT.exec(new URL(baseUrl).pathname);
  if (!endpoint) return null;
  return `ends with the endpoint ${endpoint[0].replace(/\/+$/, '')}: give the base URL, e.g. https://api.openai.com/v1 or http://vllm:8000/v1 (a bare origin gets /v1); Relay appends /chat/completions, /responses and /embeddings`;
}
