// The conformance suite every payload backend runs against the real store.
import type { Test } from 'tap';
import type { CapturedPayload } from '../../core/hooks.ts';
import type { PayloadBackend } from '../../core/observer/types.ts';
import { capturedPayload } from './observer-fixtures.ts';

export interface PayloadBackendHarness {
  backend: PayloadBackend;
  cleanup(): Promise<void>;
}

export function payloadBackendSuite(t: Test, open: () => Promise<PayloadBackendHarness>): void {
  let harness: PayloadBackendHarness;
  const shared = JSON.stringify({ model: 'm', messages: [{ role: 'system', content: 'the same long system prompt '.repeat(50) }] });
  const payloads: CapturedPayload[] = [
    capturedPayload('req-plain'),
    capturedPayload('req-unicode', { request_body: '{"content":"héllo wörld 😀 \\u0000 \\n"}', response_body: 'ünïcødé 日本語' }),
    capturedPayload('req-truncated', { request_body: 'x'.repeat(1000), request_truncated: true, response_truncated: true, response_body: 'data: {"a"' }),
    capturedPayload('req-large', { response_body: 'data: {"delta":"token"}\n\n'.repeat(8000) }),
    capturedPayload('req-shared-1', { request_body: shared }),
    capturedPayload('req-shared-2', { request_body: shared }),
    capturedPayload('req-empty', { request_body: '', response_body: '', request_headers: {}, response_headers: {} }),
    capturedPayload('0c6f7a3e-4b1d-4e8a-9a5f-2d7c1b9e8f01'),
  ];

  t.before(async () => {
    harness = await open();
    await harness.backend.write(payloads.slice(0, 3));
    await harness.backend.write(payloads.slice(3));
  });
  t.teardown(async () => {
    await harness?.cleanup();
  });

  t.test('every payload reads back unchanged by request id', async (t) => {
    for (const payload of payloads) t.same(await harness.backend.get!(payload.request_id), payload, payload.request_id);
  });

  t.test('an unknown request id is null', async (t) => {
    t.equal(await harness.backend.get!('no-such-request'), null);
    t.equal(await harness.backend.get!('../../etc/passwd'), null, 'ids are never paths');
  });

  t.test('writing the same payload again (a retried batch) is harmless', async (t) => {
    await harness.backend.write([payloads[0]]);
    t.same(await harness.backend.get!(payloads[0].request_id), payloads[0]);
  });
}
