// Small helpers for end-to-end tests that call a running Relay over HTTP: start one with a fake
// upstream, POST a JSON body and keep the exact bytes, leave a stream part-way, read a request's
// usage record, and read host-key health.
import { eventually, startRelay, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.ts';

/** A Relay and a fake upstream for one test file, both closed when it ends. */
export async function relayWithUpstream(
  t: { teardown(fn: () => Promise<void>): void }, options?: Parameters<typeof startRelay>[0],
): Promise<{ relay: TestRelay; up: FakeUpstream }> {
  const relay = await startRelay(options);
  const up = await startFakeUpstream();
  t.teardown(async () => {
    await relay.close();
    await up.close();
  });
  return { relay, up };
}

export interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

/** POSTs `body` (an object is JSON-encoded, a string is sent as is) and reads the whole answer. */
export async function post(url: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

/** POSTs to Relay's inference listener with a relay key as bearer token. */
export function viaRelay(relay: TestRelay, path: string, relayKey: string, body: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  return post(`${relay.inferenceUrl}${path}`, { authorization: `Bearer ${relayKey}`, ...extra }, body);
}

/** Starts a streamed request through Relay, reads until `until` returns true, then drops the connection. */
export async function readThenAbort(relay: TestRelay, path: string, relayKey: string, body: unknown, until: (text: string) => boolean): Promise<{ requestId: string; text: string }> {
  const controller = new AbortController();
  const res = await fetch(relay.inferenceUrl + path, {
    method: 'POST', signal: controller.signal,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${relayKey}` }, body: JSON.stringify(body),
  });
  const requestId = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  let text = '';
  while (!until(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString('utf8');
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
  return { requestId, text };
}

/** The request's usage record from GET /api/logs/{id}, once the observer has written it. */
export async function usageRecord(relay: TestRelay, requestId: string): Promise<any> {
  let record: any;
  await eventually(async () => {
    const res = await relay.api('GET', `/api/logs/${requestId}`);
    record = res.body;
    return res.status === 200;
  }, 5_000, 25);
  return record;
}

export interface HealthItem {
  hostKeyId: string;
  state: 'healthy' | 'cooling' | 'open' | 'half-open' | 'invalid' | 'disabled';
  until?: string;
  reason?: string;
}

/** GET /api/host-keys/health as a map by host-key id. */
export async function hostKeyHealth(relay: TestRelay): Promise<Map<string, HealthItem>> {
  const res = await relay.api<{ items: HealthItem[] }>('GET', '/api/host-keys/health');
  if (res.status !== 200) throw new Error(`host-key health: ${res.status}`);
  return new Map(res.body.items.map((item) => [item.hostKeyId, item]));
}

/** Sets binding weights of a model (by host id), so that failover order is (almost) fixed. */
export async function setBindingWeights(relay: TestRelay, modelId: string, weights: Record<string, number>): Promise<void> {
  const model = (await relay.api('GET', `/api/models/${modelId}`)).body;
  const bindings = model.spec.bindings.map((b: { hostId: string }) => ({ ...b, weight: weights[b.hostId] ?? 1 }));
  const res = await relay.api('PUT', `/api/models/by-id/${modelId}`, { spec: { bindings } });
  if (res.status !== 200) throw new Error(`setting binding weights: ${res.status} ${JSON.stringify(res.body)}`);
  // The change reaches the snapshot asynchronously: a request made before would see the old weights.
  const version = res.body.metadata.updatedAt as string;
  await settled(relay, (snap) => snap.models.get(modelId)?.metadata.updatedAt === version);
}

/** Waits until the instance's snapshot has applied catalog writes (NOTIFY is asynchronous). */
export async function settled(relay: TestRelay, check: (snapshot: ReturnType<TestRelay['relay']['sync']['snapshot']>) => boolean): Promise<void> {
  await eventually(() => check(relay.relay.sync.snapshot()), 5_000, 10);
}

/** Waits until a route made by seedRoute can serve: its relay key and a host key are in the snapshot. */
export async function routeLive(relay: TestRelay, seeded: { relayKeyId: string; hostId: string }): Promise<void> {
  await settled(relay, (snap) => snap.relayKeys.has(seeded.relayKeyId) && snap.hostKeysOfHost(seeded.hostId).length > 0);
}
