// A Cohere error body ({"message": "..."}, sometimes with an "id") -> the canonical error: the
// message kept, the Relay code from the HTTP status (the plugin API's shared mapping).
import { ERROR_CODES, codeForUpstreamStatus, type RelayErrorBody } from 'relay-gateway';

const MAX_MESSAGE = 2000;

export function cohereErrorMessage(body: string): string | null {
  try {
    const json = JSON.parse(body) as { message?: unknown };
    return typeof json?.message === 'string' && json.message !== '' ? json.message : null;
  } catch {
    return null;
  }
}

export function decodeCohereError(status: number, body: string): RelayErrorBody {
  const code = codeForUpstreamStatus(status);
  const def = ERROR_CODES[code];
  const message = cohereErrorMessage(body) ?? (body.trim() === '' ? `the upstream answered HTTP ${status}` : body.trim().slice(0, MAX_MESSAGE));
  return { code, type: def.type, status: def.status, message };
}
