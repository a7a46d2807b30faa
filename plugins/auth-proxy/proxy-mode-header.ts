// The value of `X-GW-Proxy-Mode`. On: 1, true, on, yes. Off: 0, false, off, no, or no header.
// Case and surrounding blanks are ignored; any other value is a 400, so that a typo never falls
// back silently to spending the operator's host keys.
import { RelayError } from '../../core/plugin-api.ts';

export const PROXY_MODE_HEADER = 'x-gw-proxy-mode';

const ON = new Set(['1', 'true', 'on', 'yes']);
const OFF = new Set(['0', 'false', 'off', 'no']);

export function proxyModeRequested(raw: string | string[] | undefined): boolean {
  if (raw === undefined) return false;
  const value = (Array.isArray(raw) ? raw[raw.length - 1] : raw).trim().toLowerCase();
  if (ON.has(value)) return true;
  if (OFF.has(value)) return false;
  throw new RelayError('RELAY_ERR_BAD_REQUEST', 'X-GW-Proxy-Mode must be one of 1, true, on, yes (proxy mode) or 0, false, off, no.', { field: 'X-GW-Proxy-Mode' });
}
