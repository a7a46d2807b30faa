// A host's base URL with or without /v1: Anthropic's SDKs take the origin
// (https://api.anthropic.com) and add /v1 themselves, while Relay's hosts long took .../v1.
// Both work; a URL that already ends with an endpoint cannot, and is refused when the host is written.

const ENDS_WITH_V1 = /\/v1\/*$/;
const ENDS_WITH_ENDPOINT = /\/messages(\/count_tokens)?\/*$/;

/** The path to append to the host's base URL for `endpoint` (/messages): /v1 is added when the base URL lacks it. */
export function anthropicPath(baseUrl: string, endpoint: string): string {
  return ENDS_WITH_V1.test(baseUrl) ? endpoint : `/v1${endpoint}`;
}

export function anthropicBaseUrlProblem(baseUrl: string): string | null {
  const endpoint = ENDS_WITH_ENDPOINT.exec(new URL(baseUrl).pathname);
  if (!endpoint) return null;
  return `ends with the endpoint ${endpoint[0].replace(/\/+$/, '')}: give the base URL, e.g. https://api.anthropic.com (with or without /v1); Relay appends /v1/messages and /v1/messages/count_tokens`;
}
