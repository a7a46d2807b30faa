// Test fixtures for the observer and the log backends: usage events and a settings store.
import { randomUUID } from 'node:crypto';
import type { CapturedPayload, UsageEvent } from '../../core/hooks.ts';
import { DEFAULT_SETTINGS, type SettingName, type Settings, type SettingsValues } from '../../core/settings/types.ts';

export function usageEvent(overrides: Partial<UsageEvent> = {}): UsageEvent {
  const started = overrides.started_at ?? new Date().toISOString();
  return {
    request_id: randomUUID(),
    started_at: started,
    finished_at: new Date(Date.parse(started) + (overrides.latency_ms ?? 120)).toISOString(),
    relay_key_id: 'key-1', relay_key_prefix: 'rk_ab12', policy_id: 'policy-1',
    model_requested: 'gpt-test', model_id: 'model-1', model_slug: 'gpt-test',
    host_id: 'host-1', host_key_id: 'hk-1', provider_id: 'prov-1', upstream_model: 'gpt-test-2026',
    inbound_shape: 'openai.chat', upstream_shape: 'openai.chat',
    status: 200, error_code: null, stream: false,
    input_tokens: 100, output_tokens: 20, cache_read_tokens: 10, cache_write_tokens: 0, reasoning_tokens: 0,
    cost: 0.0012, currency: 'USD', latency_ms: 120, ttfb_ms: 40, attempts: 1, client_aborted: false,
    client: null, extras: {}, client_request_id: null, upstream_request_id: null,
    ...overrides,
  };
}

export function capturedPayload(requestId: string, overrides: Partial<CapturedPayload> = {}): CapturedPayload {
  return {
    request_id: requestId,
    request_body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `hello ${requestId}` }] }),
    response_body: 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n',
    request_truncated: false,
    response_truncated: false,
    request_headers: { 'content-type': 'application/json' },
    response_headers: { 'content-type': 'text/event-stream' },
    captured_at: new Date().toISOString(),
    ...overrides,
  };
}

/** An in-memory Settings with set() for tests. */
export function testSettings(initial: Partial<SettingsValues> = {}): Settings & { set<K extends SettingName>(name: K, value: SettingsValues[K]): void } {
  const values: SettingsValues = structuredClone({ ...DEFAULT_SETTINGS, ...initial });
  const listeners: Array<(name: SettingName) => void> = [];
  return {
    get: (name) => values[name],
    onChange: (fn) => { listeners.push(fn); },
    set(name, value) {
      values[name] = value;
      for (const fn of listeners) fn(name);
    },
  };
}

export const silentLog = { info() {}, warn() {}, error() {} };
