// What a hostile request to an inference route may get back: a 2xx, or a 4xx whose JSON body is an
// error in the caller's wire shape. Anything else (a 5xx, a non-JSON 4xx, a hang) is a finding.
export type ErrorShape = 'openai' | 'anthropic' | 'canonical';

export interface Finding {
  what: string;
  problem: string;
}

/** Null when the answer is acceptable, otherwise what is wrong with it. */
export function judgeAnswer(shape: ErrorShape, status: number, contentType: string | null, text: string): string | null {
  if (status >= 200 && status < 300) return null;
  if (status < 400 || status >= 500) return `status ${status}: ${text.slice(0, 300)}`;
  if (!/^application\/json/.test(contentType ?? '')) return `status ${status} with content-type ${contentType}`;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  const ok = shape === 'openai'
    ? typeof body?.error?.message === 'string' && typeof body.error.type === 'string'
    : shape === 'anthropic'
      ? body?.type === 'error' && typeof body.error?.type === 'string' && typeof body.error.message === 'string'
      : typeof body?.error?.code === 'string' && body.error.status === status && typeof body.error.message === 'string';
  return ok ? null : `status ${status} with an error body not in the ${shape} shape: ${text.slice(0, 200)}`;
}
