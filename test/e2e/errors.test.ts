// Every row of the spec's error table, end to end, rendered in the caller's wire shape:
// OpenAI's {"error":{"message","type","code"}} under /vendor-a, Anthropic's
// {"type":"error","error":{"type","message"}} under /vendor-b, the canonical form on /v1.
// Every answer carries x-request-id, and no secret ever appears in one.
import { recordFaultCounters } from '../support/fault-counters.ts';
import t, { type Test } from 'tap';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, faults, refusingUrl } from '../support/fake-upstream.ts';
import { post, viaRelay, settled, routeLive, type Answer } from '../support/relay-client.ts';

const BODY_LIMIT = 4096;
const relay = await startRelay({ config: { server: { host: '127.0.0.1', drainTimeoutMs: 5_000, bodyLimitBytes: BODY_LIMIT } } });
const up = await startFakeUpstream();
t.teardown(async () => {
  await recordFaultCounters('errors', relay, [up]);
  await relay.close();
  await up.close();
});

type Shape = 'vendor-a' | 'vendor-b' | 'canonical';
const SHAPES: Shape[] = ['vendor-a', 'vendor-b', 'canonical'];
const PATHS: Record<Shape, string> = { 'vendor-a': '/vendor-a/v1/chat/completions', 'vendor-b': '/vendor-b/v1/messages', canonical: '/v1/generate' };

/** A valid request body of each shape for `model`. */
function bodyFor(shape: Shape, model: string): Record<string, unknown> {
  if (shape === 'vendor-a') return { model, messages: [{ role: 'user', content: 'hi' }] };
  if (shape === 'vendor-b') return { model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  return { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
}

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'request_too_large', 415: 'invalid_request_error', 429: 'rate_limit_error', 502: 'api_error', 503: 'overloaded_error', 504: 'timeout_error',
};
const OPENAI_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error',
  413: 'invalid_request_error', 415: 'invalid_request_error', 429: 'rate_limit_error', 502: 'server_error', 503: 'server_error', 504: 'timeout_error',
};

/** Asserts status, code and the caller's error shape; returns the error message. */
function expectError(t: Test, shape: Shape, got: Answer, status: number, code: string, secrets: string[] = []): string {
  const what = `${shape} ${status} ${code}`;
  t.equal(got.status, status, `${what}: status`);
  t.match(got.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, `${what}: x-request-id`);
  t.match(got.headers.get('content-type'), /^application\/json/, `${what}: JSON`);
  t.equal(got.headers.get('x-relay-error-code'), code, `${what}: the code in a header, whatever the shape`);
  for (const secret of secrets) t.notOk(got.text.includes(secret), `${what}: no secret in the body`);
  const body = JSON.parse(got.text);
  let message: string;
  if (shape === 'vendor-a') {
    t.same(Object.keys(body), ['error'], `${what}: OpenAI shape`);
    t.match(body.error, { message: String, type: OPENAI_TYPES[status], code }, `${what}: OpenAI fields`);
    t.ok('param' in body.error, `${what}: OpenAI param`);
    message = body.error.message;
  } else if (shape === 'vendor-b') {
    t.same(Object.keys(body).sort(), ['error', 'type'], `${what}: Anthropic shape`);
    t.equal(body.type, 'error');
    t.same(Object.keys(body.error).sort(), ['message', 'type'], `${what}: Anthropic error fields`);
    t.equal(body.error.type, ANTHROPIC_TYPES[status], `${what}: Anthropic type`);
    message = body.error.message;
  } else {
    t.match(body, { error: { code, status, type: String, message: String } }, `${what}: canonical shape`);
    message = body.error.message;
  }
  t.ok(message.length > 0, `${what}: says what is wrong`);
  return message;
}

let seq = 0;
async function seed(options: Partial<Parameters<typeof seedRoute>[1]> = {}): Promise<Seeded> {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `err-${++seq}`, ...options });
  await routeLive(relay, s);
  return s;
}

const main = await seed();

t.test('401: missing, wrong, disabled and expired relay keys', async (t) => {
  const wrong = 'rk_this-is-not-a-relay-key-0123456789';
  for (const shape of SHAPES) {
    const body = bodyFor(shape, main.modelSlug);
    expectError(t, shape, await post(relay.inferenceUrl + PATHS[shape], {}, body), 401, 'RELAY_ERR_RELAY_KEY_INVALID');
    expectError(t, shape, await post(relay.inferenceUrl + PATHS[shape], { authorization: `Bearer ${wrong}` }, body), 401, 'RELAY_ERR_RELAY_KEY_INVALID', [wrong]);
    expectError(t, shape, await post(relay.inferenceUrl + PATHS[shape], { 'x-api-key': wrong }, body), 401, 'RELAY_ERR_RELAY_KEY_INVALID', [wrong]);
    expectError(t, shape, await post(relay.inferenceUrl + PATHS[shape], { authorization: `Basic ${wrong}` }, body), 401, 'RELAY_ERR_RELAY_KEY_INVALID', [wrong]);
  }
  // Endpoints without a codec of their own render errors in their family's shape.
  const embeddings = await post(`${relay.inferenceUrl}/vendor-a/v1/embeddings`, { authorization: `Bearer ${wrong}` }, { model: main.modelSlug, input: 'x' });
  expectError(t, 'vendor-a', embeddings, 401, 'RELAY_ERR_RELAY_KEY_INVALID', [wrong]);
  const countTokens = await post(`${relay.inferenceUrl}/vendor-b/v1/messages/count_tokens`, { 'x-api-key': wrong }, { model: main.modelSlug, messages: [] });
  expectError(t, 'vendor-b', countTokens, 401, 'RELAY_ERR_RELAY_KEY_INVALID', [wrong]);
  const disabled = await seed();
  const expired = await seed();
  t.equal((await relay.api('PUT', `/api/relay-keys/by-id/${disabled.relayKeyId}`, { spec: { enabled: false } })).status, 200);
  t.equal((await relay.api('PUT', `/api/relay-keys/by-id/${expired.relayKeyId}`, { spec: { expiresAt: new Date(Date.now() - 60_000).toISOString() } })).status, 200);
  await settled(relay, (s) => s.relayKeys.get(disabled.relayKeyId)?.spec.enabled === false && !!s.relayKeys.get(expired.relayKeyId)?.spec.expiresAt);
  for (const shape of SHAPES) {
    const d = expectError(t, shape, await viaRelay(relay, PATHS[shape], disabled.relayKey, bodyFor(shape, disabled.modelSlug)), 401, 'RELAY_ERR_RELAY_KEY_INVALID', [disabled.relayKey]);
    t.match(d, /disabled/);
    const e = expectError(t, shape, await viaRelay(relay, PATHS[shape], expired.relayKey, bodyFor(shape, expired.modelSlug)), 401, 'RELAY_ERR_RELAY_KEY_INVALID', [expired.relayKey]);
    t.match(e, /expired/);
  }
});

t.test('403: the policy does not grant the model', async (t) => {
  const other = await seed();
  for (const shape of SHAPES) {
    const message = expectError(t, shape, await viaRelay(relay, PATHS[shape], main.relayKey, bodyFor(shape, other.modelSlug)), 403, 'RELAY_ERR_MODEL_NOT_GRANTED', [main.relayKey]);
    t.match(message, other.modelSlug, 'names the model');
  }
});

t.test('404: unknown model, and a model with no enabled binding', async (t) => {
  const off = await seed();
  const model = (await relay.api('GET', `/api/models/${off.modelId}`)).body;
  const bindings = model.spec.bindings.map((b: object) => ({ ...b, enabled: false }));
  t.equal((await relay.api('PUT', `/api/models/by-id/${off.modelId}`, { spec: { bindings } })).status, 200);
  await settled(relay, (s) => s.models.get(off.modelId)?.spec.bindings.every((b) => !b.enabled) === true);
  for (const shape of SHAPES) {
    const unknown = expectError(t, shape, await viaRelay(relay, PATHS[shape], main.relayKey, bodyFor(shape, 'no-such-model')), 404, 'RELAY_ERR_MODEL_NOT_FOUND');
    t.match(unknown, 'no-such-model');
    expectError(t, shape, await viaRelay(relay, PATHS[shape], off.relayKey, bodyFor(shape, off.modelSlug)), 404, 'RELAY_ERR_MODEL_NOT_FOUND');
  }
});

t.test('429: a relay-side rate limit, with retry-after and "try again in Ns"', async (t) => {
  const limit = await relay.api('POST', '/api/rate-limits', { metadata: { displayName: 'one a minute' }, spec: { requestsPerMinute: 1 } });
  t.equal(limit.status, 201, JSON.stringify(limit.body));
  const s = await seed({ policy: { rateLimitIds: [limit.body.metadata.id] } });
  await settled(relay, (snap) => snap.rateLimits.has(limit.body.metadata.id));
  // A fixed one-minute window: stay clear of its end so that all requests share one window.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 55_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
  t.equal((await viaRelay(relay, PATHS['vendor-a'], s.relayKey, bodyFor('vendor-a', s.modelSlug))).status, 200, 'the first request is within the limit');
  for (const shape of SHAPES) {
    const got = await viaRelay(relay, PATHS[shape], s.relayKey, bodyFor(shape, s.modelSlug));
    const message = expectError(t, shape, got, 429, 'RELAY_ERR_RATE_LIMITED', [s.relayKey]);
    const seconds = Number(got.headers.get('retry-after'));
    t.ok(seconds >= 1 && seconds <= 60, `${shape}: retry-after in seconds (${seconds})`);
    t.match(message, new RegExp(`try again in ${seconds}s`), `${shape}: "try again in Ns" agrees with retry-after`);
  }
});

t.test('502: every host refuses connections', async (t) => {
  const refusing = await refusingUrl();
  for (const shape of SHAPES) {
    // One route per shape: a refused key cools down, and the next request would be a 503.
    const s = await seed({ baseUrl: `${refusing}/v1`, hostKeys: [`sk-refused-${shape}`] });
    const message = expectError(t, shape, await viaRelay(relay, PATHS[shape], s.relayKey, bodyFor(shape, s.modelSlug)), 502, 'RELAY_ERR_UPSTREAM_UNREACHABLE', [s.relayKey, `sk-refused-${shape}`]);
    t.match(message, /could not be reached/);
    t.notMatch(message, /127\.0\.0\.1/, 'the upstream address is not disclosed');
  }
});

t.test('429: after an upstream 429 put every key on cooldown, the retry is still a rate limit with retry-after', async (t) => {
  const cooling = await startFakeUpstream();
  t.teardown(() => cooling.close());
  const s = await seed({ baseUrl: `${cooling.url}/v1`, hostKeys: ['sk-cooling-only'] });
  cooling.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 40 }));
  const first = await viaRelay(relay, PATHS['vendor-a'], s.relayKey, bodyFor('vendor-a', s.modelSlug));
  t.equal(first.status, 429, 'the upstream 429 on the last key passes through');
  for (const shape of SHAPES) {
    const got = await viaRelay(relay, PATHS[shape], s.relayKey, bodyFor(shape, s.modelSlug));
    const message = expectError(t, shape, got, 429, 'RELAY_ERR_UPSTREAM_RATE_LIMITED', [s.relayKey, 'sk-cooling-only']);
    const seconds = Number(got.headers.get('retry-after'));
    t.ok(seconds >= 38 && seconds <= 40, `${shape}: retry-after until the key is usable (${seconds})`);
    t.match(message, `try again in ${seconds}s`);
    t.match(message, /rate-limited by the upstream/, `${shape}: names the cause`);
  }
  t.equal(cooling.count, 1, 'no request reached the cooling key');
});

t.test('503: no healthy key (the host circuit opened after a run of upstream failures)', async (t) => {
  const failing = await startFakeUpstream();
  t.teardown(() => failing.close());
  failing.script(() => faults.serverError({ vendor: 'openai', status: 500 }));
  const s = await seed({ baseUrl: `${failing.url}/v1`, hostKeys: ['sk-failing-only'] });
  // The default circuit: 5 failures in a row within 30 s.
  for (let i = 0; i < 5; i++) t.equal((await viaRelay(relay, PATHS['vendor-a'], s.relayKey, bodyFor('vendor-a', s.modelSlug))).status, 500, "the upstream's 500 passes through");
  for (const shape of SHAPES) {
    const got = await viaRelay(relay, PATHS[shape], s.relayKey, bodyFor(shape, s.modelSlug));
    const message = expectError(t, shape, got, 503, 'RELAY_ERR_NO_HEALTHY_KEY', [s.relayKey, 'sk-failing-only']);
    const seconds = Number(got.headers.get('retry-after'));
    t.ok(seconds >= 1 && seconds <= 15, `${shape}: retry-after until the half-open probe (${seconds})`);
    t.match(message, `try again in ${seconds}s`);
    t.match(message, /its upstream host failed repeatedly \(circuit open\)/, `${shape}: names the cause`);
  }
  t.equal(failing.count, 5, 'no request reached the open host');
});

t.test('404: no usable host key (none, every one disabled, or a host-tier policy that excludes the model), naming the cause', async (t) => {
  const none = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `err-${++seq}`, hostKeys: [] });
  const disabled = await seed({ hostKeys: ['sk-off-one', 'sk-off-two'] });
  for (const id of disabled.hostKeyIds) t.equal((await relay.api('PUT', `/api/host-keys/by-id/${id}`, { spec: { enabled: false } })).status, 200);
  const excluded = await seed({ hostKeys: ['sk-excluded'] });
  const policy = await relay.api('POST', '/api/policies', { metadata: { displayName: 'host tier, another model' }, spec: { tier: 'host', modelIds: [main.modelId] } });
  t.equal(policy.status, 201, JSON.stringify(policy.body));
  t.equal((await relay.api('PUT', `/api/host-keys/by-id/${excluded.hostKeyIds[0]}`, { spec: { policyId: policy.body.metadata.id } })).status, 200);
  await settled(relay, (snap) => snap.relayKeys.has(none.relayKeyId)
    && disabled.hostKeyIds.every((id) => snap.hostKeys.get(id)?.spec.enabled === false)
    && snap.hostKeys.get(excluded.hostKeyIds[0]!)?.spec.policyId === policy.body.metadata.id);
  const cases: Array<[string, Seeded, RegExp]> = [
    ['no key', none, /has no usable host key: host `[^`]+` has no host keys\./],
    ['every key disabled', disabled, /has no usable host key: every host key of host `[^`]+` is disabled\./],
    ['excluded by the host-tier policy', excluded, /has no usable host key: the host-tier policy of every host key of host `[^`]+` excludes the model\./],
  ];
  for (const [what, s, cause] of cases) {
    for (const shape of SHAPES) {
      const got = await viaRelay(relay, PATHS[shape], s.relayKey, bodyFor(shape, s.modelSlug));
      const message = expectError(t, shape, got, 404, 'RELAY_ERR_NO_USABLE_HOST_KEY', [s.relayKey, 'sk-off-one', 'sk-excluded']);
      t.match(message, cause, `${what}, ${shape}: the message names the cause`);
      t.match(message, s.modelSlug, `${what}, ${shape}: and the model`);
      t.equal(got.headers.get('retry-after'), null, `${what}, ${shape}: configuration is not transient: no retry-after`);
    }
  }
});

t.test('503: the only host key cannot be used here (its variable is not set), naming the key and its host', async (t) => {
  const s = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `err-${++seq}`, hostKeys: [] });
  const created = await relay.api<{ metadata: { id: string } }>('POST', '/api/host-keys', {
    metadata: { displayName: 'from-env' }, spec: { hostId: s.hostId, valueFrom: { kind: 'env', env: 'ERRORS_TEST_HOST_KEY_NOT_SET' } },
  });
  t.equal(created.status, 201, 'the API takes a key whose variable this instance lacks (another instance may have it)');
  await settled(relay, (snap) => snap.hostKeys.has(created.body.metadata.id));
  const host = (await relay.api<{ metadata: { slug: string } }>('GET', `/api/hosts/${s.hostId}`)).body.metadata.slug;
  const got = await viaRelay(relay, PATHS['vendor-a'], s.relayKey, bodyFor('vendor-a', s.modelSlug));
  const message = expectError(t, 'vendor-a', got, 503, 'RELAY_ERR_NO_HEALTHY_KEY', [s.relayKey]);
  t.match(message, s.modelSlug, 'names the model');
  t.match(message, 'host key `from-env`', 'names the host key');
  t.match(message, `host \`${host}\``, 'and its host');
  t.notMatch(message, 'ERRORS_TEST_HOST_KEY_NOT_SET', 'not the variable: the caller is not the operator');
  const health = await relay.api<{ items: Array<{ hostKeyId: string; state: string; reason?: string }> }>('GET', '/api/host-keys/health');
  const item = health.body.items.find((i) => i.hostKeyId === created.body.metadata.id);
  t.equal(item?.state, 'invalid', 'the health API marks it');
  t.match(item?.reason, 'environment variable ERRORS_TEST_HOST_KEY_NOT_SET is not set', 'and says why, for the operator');
});

t.test('413: a body over server.bodyLimitBytes', async (t) => {
  for (const shape of SHAPES) {
    const body = { ...bodyFor(shape, main.modelSlug), padding: 'x'.repeat(BODY_LIMIT) };
    expectError(t, shape, await viaRelay(relay, PATHS[shape], main.relayKey, body), 413, 'RELAY_ERR_BODY_TOO_LARGE');
  }
});

t.test('400: malformed JSON, a non-object body, a missing or ill-typed model or stream', async (t) => {
  for (const shape of SHAPES) {
    const base = bodyFor(shape, main.modelSlug);
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['malformed JSON', '{"model": "x",', 'RELAY_ERR_INVALID_JSON', /JSON/],
      ['an empty body', '', 'RELAY_ERR_INVALID_JSON', /empty/],
      ['an array', '[1,2]', 'RELAY_ERR_BAD_REQUEST', /object/],
      ['a string', '"hello"', 'RELAY_ERR_BAD_REQUEST', /object/],
      ['null', 'null', 'RELAY_ERR_BAD_REQUEST', /object/],
      ['a missing model', { ...base, model: undefined }, 'RELAY_ERR_BAD_REQUEST', /model/],
      ['a numeric model', { ...base, model: 42 }, 'RELAY_ERR_BAD_REQUEST', /model/],
      ['an empty model', { ...base, model: '' }, 'RELAY_ERR_BAD_REQUEST', /model/],
      ['a string stream', { ...base, stream: 'yes' }, 'RELAY_ERR_BAD_REQUEST', /stream/],
    ];
    for (const [what, body, code, says] of cases) {
      const message = expectError(t, shape, await viaRelay(relay, PATHS[shape], main.relayKey, body), 400, code);
      t.match(message, says, `${shape}, ${what}: says what is wrong`);
    }
  }
  t.equal(up.requests.filter((r) => r.json?.model === undefined).length, 0, 'nothing malformed reached the upstream');
});

t.test('415: a wrong content-type', async (t) => {
  for (const shape of SHAPES) {
    const got = await post(relay.inferenceUrl + PATHS[shape], { authorization: `Bearer ${main.relayKey}`, 'content-type': 'text/plain' }, JSON.stringify(bodyFor(shape, main.modelSlug)));
    expectError(t, shape, got, 415, 'RELAY_ERR_UNSUPPORTED_MEDIA_TYPE');
    const form = await post(relay.inferenceUrl + PATHS[shape], { authorization: `Bearer ${main.relayKey}`, 'content-type': 'application/x-www-form-urlencoded' }, 'model=x');
    expectError(t, shape, form, 415, 'RELAY_ERR_UNSUPPORTED_MEDIA_TYPE');
    const res = await fetch(relay.inferenceUrl + PATHS[shape], { method: 'POST', headers: { authorization: `Bearer ${main.relayKey}` }, body: new Uint8Array(Buffer.from('{}')) });
    const bytes = Buffer.from(await res.arrayBuffer());
    expectError(t, shape, { status: res.status, headers: res.headers, bytes, text: bytes.toString() }, 415, 'RELAY_ERR_UNSUPPORTED_MEDIA_TYPE');
  }
  const charset = await post(relay.inferenceUrl + PATHS['vendor-a'], { authorization: `Bearer ${main.relayKey}`, 'content-type': 'application/json; charset=utf-8' }, bodyFor('vendor-a', main.modelSlug));
  t.equal(charset.status, 200, 'application/json with a charset is JSON');
});

t.test('successful answers carry x-request-id too', async (t) => {
  for (const shape of SHAPES) {
    const got = await viaRelay(relay, PATHS[shape], main.relayKey, bodyFor(shape, main.modelSlug));
    t.equal(got.status, 200, `${shape}: ${got.text.slice(0, 200)}`);
    t.match(got.headers.get('x-request-id'), /^[0-9a-f-]{36}$/);
  }
});

t.test('an unknown path under a wire prefix answers 404 in that wire shape', async (t) => {
  const a = await fetch(`${relay.inferenceUrl}/vendor-a/v1/nope`, { method: 'POST' });
  t.equal(a.status, 404);
  t.match(await a.json(), { error: { message: /no route/, code: 'RELAY_ERR_NOT_FOUND' } });
  t.ok(a.headers.get('x-request-id'));
  const b = await fetch(`${relay.inferenceUrl}/vendor-b/v1/nope`);
  t.equal(b.status, 404);
  t.match(await b.json(), { type: 'error', error: { type: 'not_found_error' } });
});
