// Failover across host keys and hosts, end to end (DESIGN.md "Failover and the first byte",
// "Health and states"): what fails over, what it does to key health, and what reaches the
// client when nothing is left to try or bytes already flowed.
import t from 'tap';
import { recordFaultCounters } from '../support/fault-counters.ts';
import { startRelay, seedRoute, type Seeded } from '../../core/testing.ts';
import { startFakeUpstream, faults, refusingUrl, openai, anthropic, parseSse, type FakeUpstream, type ScriptFn } from '../support/fake-upstream.ts';
import { post, viaRelay, usageRecord, hostKeyHealth, setBindingWeights, settled } from '../support/relay-client.ts';

const relay = await startRelay();
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await recordFaultCounters('failover', relay, upstreams);
  await relay.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

async function fake(chunks = 5): Promise<FakeUpstream> {
  const up = await startFakeUpstream({ chunks });
  upstreams.push(up);
  return up;
}

let modelSeq = 0;
/** A fresh model on its own host with `keys` host-key secrets, usable once the snapshot has it. */
async function seed(baseUrl: string, adapter: 'openai' | 'anthropic', keys: string[], model = `failover-${++modelSeq}`): Promise<Seeded> {
  const seeded = await seedRoute(relay, { baseUrl: `${baseUrl}/v1`, adapter, model, hostKeys: keys });
  await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && s.hostKeysOfHost(seeded.hostId).length === keys.length
    && s.models.get(seeded.modelId)?.spec.bindings.some((b) => b.hostId === seeded.hostId) === true);
  return seeded;
}

/** Two hosts serving one model; `first` gets binding weight 1000, `second` 1 (tried first ~99.9%). */
async function twoHosts(first: string, second: string, adapter: 'openai' | 'anthropic'): Promise<{ a: Seeded; b: Seeded }> {
  const a = await seed(first, adapter, [`sk-a-${modelSeq + 1}`]);
  const b = await seed(second, adapter, [`sk-b-${modelSeq}`], a.modelSlug);
  await setBindingWeights(relay, a.modelId, { [a.hostId]: 1000, [b.hostId]: 1 });
  await settled(relay, (s) => s.models.get(a.modelId)?.spec.bindings.find((x) => x.hostId === a.hostId)?.weight === 1000);
  return { a, b };
}

const bearer = (rec: { headers: Record<string, unknown> }) => String(rec.headers.authorization).replace(/^Bearer /, '');
const chat = (model: string, stream = false) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });

/** The first request that reaches any of the fakes gets `action`; the rest get the default. */
function failFirst(action: Parameters<FakeUpstream['enqueue']>[0], ...ups: FakeUpstream[]): void {
  let served = false;
  const script: ScriptFn = () => {
    if (served) return undefined;
    served = true;
    return action;
  };
  for (const up of ups) up.script(script);
}

t.test('a 429 from the first key: the second key serves, the first cools down until retry-after', async (t) => {
  const up = await fake();
  const keys = ['sk-rl-one', 'sk-rl-two'];
  const s = await seed(up.url, 'openai', keys);
  up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 30 }));
  const before = Date.now();
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(got.status, 200, 'the client gets an answer');
  t.equal(up.count, 2, 'two upstream attempts');
  const [first, second] = up.requests.map(bearer);
  t.not(first, second, 'the second attempt used the other key');
  const direct = await post(`${up.url}/v1/chat/completions`, {}, up.requests[1]!.json);
  t.ok(got.bytes.equals(direct.bytes), "the client receives the second key's answer, byte for byte");

  const health = await hostKeyHealth(relay);
  const cooled = health.get(s.hostKeyIds[keys.indexOf(first!)]!)!;
  t.equal(cooled.state, 'cooling', 'the rate-limited key cools down');
  const until = Date.parse(cooled.until!);
  t.ok(until >= before + 29_000 && until <= Date.now() + 31_000, `until honours retry-after: 30 s (got ${until - before} ms)`);
  t.equal(health.get(s.hostKeyIds[keys.indexOf(second!)]!)!.state, 'healthy', 'the serving key stays healthy');
  t.notMatch(JSON.stringify(cooled), /sk-rl/, 'health never shows a host-key secret');

  const record = await usageRecord(relay, got.headers.get('x-request-id')!);
  t.equal(record.attempts, 2);
  t.equal(record.status, 200);
  t.equal(record.host_key_id, s.hostKeyIds[keys.indexOf(second!)]);

  const seen = up.count; // the direct request above counts too
  const again = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(again.status, 200);
  t.equal(up.count, seen + 1, 'one attempt: the cooling key is skipped');
  t.equal(bearer(up.lastRequest()!), second, 'while it cools, only the healthy key is used');
});

t.test('the first host refuses connections: the next host serves', async (t) => {
  const good = await fake();
  const { a, b } = await twoHosts(await refusingUrl(), good.url, 'openai');
  // Order is weighted random (1000:1): in the rare draw where the good host comes first, the
  // refusing one was never tried and stays healthy, so ask again.
  let got = await viaRelay(relay, '/vendor-a/v1/chat/completions', a.relayKey, chat(a.modelSlug));
  let record = await usageRecord(relay, got.headers.get('x-request-id')!);
  for (let i = 0; i < 2 && record.attempts === 1; i++) {
    got = await viaRelay(relay, '/vendor-a/v1/chat/completions', a.relayKey, chat(a.modelSlug));
    record = await usageRecord(relay, got.headers.get('x-request-id')!);
  }
  t.equal(got.status, 200);
  const direct = await post(`${good.url}/v1/chat/completions`, {}, good.lastRequest()!.json);
  t.ok(got.bytes.equals(direct.bytes), "the client receives the second host's answer");
  t.equal(record.attempts, 2, 'the refusing host was tried first');
  t.equal(record.host_id, b.hostId);
  const refused = (await hostKeyHealth(relay)).get(a.hostKeyIds[0]!)!;
  t.equal(refused.state, 'healthy', "one refused connection does not take the host's key out of rotation (only a run of them opens its circuit)");
});

t.test('a Responses stream that opens with response.created and then fails: the next key serves the stream', async (t) => {
  for (const as of ['failed', 'error'] as const) {
    const up = await fake();
    const s = await seed(up.url, 'openai', ['sk-resp-one', 'sk-resp-two']);
    up.enqueue(faults.responsesFailed({ model: s.modelSlug, as }));
    const got = await viaRelay(relay, '/vendor-a/v1/responses', s.relayKey, { model: s.modelSlug, input: 'hi', stream: true });
    t.equal(got.status, 200);
    t.equal(up.count, 2, `${as}: two attempts`);
    t.not(bearer(up.requests[0]!), bearer(up.requests[1]!));
    const direct = await post(`${up.url}/v1/responses`, {}, up.requests[1]!.json);
    t.ok(got.bytes.equals(direct.bytes), `${as}: the client sees only the good stream, byte for byte`);
    t.notMatch(got.text, /response\.failed|rate_limit_exceeded/, `${as}: nothing of the failed attempt leaks`);
    const events = parseSse(got.text).map((f) => f.event);
    t.equal(events.filter((e) => e === 'response.created').length, 1, 'one response.created');
  }
});

t.test('an Anthropic stream with message_start and then `event: error`: the next host serves the stream', async (t) => {
  const first = await fake();
  const second = await fake();
  const { a } = await twoHosts(first.url, second.url, 'anthropic');
  failFirst(faults.anthropicStreamError({ model: a.modelSlug }), first, second);
  const got = await viaRelay(relay, '/vendor-b/v1/messages', a.relayKey, { model: a.modelSlug, max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 200);
  t.equal(first.count + second.count, 2, 'two attempts');
  t.equal(first.count, 1, 'one attempt per host');
  const served = first.requests[0]!.receivedAt > second.requests[0]!.receivedAt ? first : second;
  const direct = await post(`${served.url}/v1/messages`, {}, served.lastRequest()!.json);
  t.ok(got.bytes.equals(direct.bytes), 'the client sees only the good stream, byte for byte');
  t.notMatch(got.text, /overloaded_error/);
  t.equal(parseSse(got.text).filter((f) => f.event === 'message_start').length, 1, 'one message_start');
});

// The Anthropic stream's output frames are told by name and never decoded by the tap
// (StreamInspector.outputEvents): they must count as output all the same.
for (const [vendor, path, adapter, streamOf, body] of [
  ['Chat Completions', '/vendor-a/v1/chat/completions', 'openai', (model: string) => openai.chatChunks({ model, chunks: 6 }), (model: string) => chat(model, true)],
  ['Anthropic Messages', '/vendor-b/v1/messages', 'anthropic', (model: string) => anthropic.events({ model, chunks: 6 }),
    (model: string) => ({ model, max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'hi' }] })],
] as const) {
  t.test(`${vendor}: a stream cut after output reaches the client as a cut, with no second attempt`, async (t) => {
    const up = await fake();
    const s = await seed(up.url, adapter, [`sk-cut-one-${adapter}`, `sk-cut-two-${adapter}`]);
    const frames = streamOf(s.modelSlug);
    up.enqueue(faults.cutStream(frames, 4, 'reset', 30));
    const res = await fetch(`${relay.inferenceUrl}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.relayKey}` }, body: JSON.stringify(body(s.modelSlug)),
    });
    t.equal(res.status, 200, 'the stream had started');
    const requestId = res.headers.get('x-request-id')!;
    let received = '';
    const reader = res.body!.getReader();
    const cut = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return false;
          received += Buffer.from(value).toString('utf8');
        }
      } catch {
        return true;
      }
    })();
    t.ok(cut, 'the client sees the stream break, not a clean end');
    t.ok(received.startsWith(frames.slice(0, 4).join('')) || frames.slice(0, 4).join('').startsWith(received), 'what arrived is the upstream bytes');
    t.notMatch(received, /\[DONE\]|message_stop/);
    await new Promise((r) => setTimeout(r, 200));
    // Besides the one generation, the prompt of the broken answer may be counted (unreported-usage.ts): no second attempt.
    t.equal(up.requests.filter((r) => !/\/(input_tokens|count_tokens)$/.test(r.pathname)).length, 1, 'the fake got exactly one generation request');
    const record = await usageRecord(relay, requestId);
    t.equal(record.attempts, 1);
    t.equal(record.error_code, 'upstream_stream_error');
  });
}

t.test('a 401 from the upstream marks the key invalid and fails over', async (t) => {
  const up = await fake();
  const keys = ['sk-auth-one', 'sk-auth-two'];
  const s = await seed(up.url, 'anthropic', keys);
  up.enqueue(faults.unauthorized({ vendor: 'anthropic' }));
  const got = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, { model: s.modelSlug, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  t.equal(got.status, 200);
  t.equal(up.count, 2);
  const failed = String(up.requests[0]!.headers['x-api-key']);
  const served = String(up.requests[1]!.headers['x-api-key']);
  t.not(failed, served);
  const health = await hostKeyHealth(relay);
  t.equal(health.get(s.hostKeyIds[keys.indexOf(failed)]!)!.state, 'invalid', 'the refused key is invalid');
  t.equal(health.get(s.hostKeyIds[keys.indexOf(served)]!)!.state, 'healthy');
});

t.test('5xx answers fail over; one does not take the key out of rotation', async (t) => {
  for (const status of [500, 503, 529]) {
    const up = await fake();
    const keys = [`sk-5xx-${status}-a`, `sk-5xx-${status}-b`];
    const vendor = status === 529 ? 'anthropic' : 'openai';
    const s = await seed(up.url, vendor, keys);
    up.enqueue(faults.serverError({ vendor, status }));
    const got = vendor === 'openai'
      ? await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))
      : await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, { model: s.modelSlug, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(got.status, 200, `${status}: served by the next key`);
    t.equal(up.count, 2);
    const failedSecret = vendor === 'openai' ? bearer(up.requests[0]!) : String(up.requests[0]!.headers['x-api-key']);
    t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[keys.indexOf(failedSecret)]!)!.state, 'healthy', `${status}: the key stays in rotation (a 5xx says something about the host, not the key)`);
  }
});

t.test('when the last candidate fails, the upstream error reaches the client unmodified', async (t) => {
  t.test('OpenAI 429 with retry-after', async (t) => {
    const up = await fake();
    const s = await seed(up.url, 'openai', ['sk-last-429']);
    const fault = faults.rateLimit({ vendor: 'openai', retryAfter: 7, model: s.modelSlug });
    up.enqueue(fault);
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
    t.equal(got.status, 429);
    t.equal(got.text, JSON.stringify(fault.body), 'same body bytes');
    t.equal(got.headers.get('retry-after'), '7');
    t.equal(got.headers.get('x-ratelimit-remaining-tokens'), '0', "the upstream's headers pass");
    t.match(got.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, "Relay's request id");
    t.match(got.text, /try again in 7s/);
  });
  t.test('Anthropic 529 after the other host failed too', async (t) => {
    const first = await fake();
    const second = await fake();
    const { a } = await twoHosts(first.url, second.url, 'anthropic');
    const fault = faults.serverError({ vendor: 'anthropic', status: 529 });
    first.script(() => fault);
    second.script(() => fault);
    const got = await viaRelay(relay, '/vendor-b/v1/messages', a.relayKey, { model: a.modelSlug, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(first.count + second.count, 2, 'both hosts were tried');
    t.equal(got.status, 529);
    t.equal(got.text, JSON.stringify(fault.body), 'same body bytes');
    t.equal(got.headers.get('x-should-retry'), 'true');
  });
  t.test('a Responses stream that fails on the last key reaches the client as it is', async (t) => {
    const up = await fake();
    const s = await seed(up.url, 'openai', ['sk-last-stream']);
    const fault = faults.responsesFailed({ model: s.modelSlug });
    up.enqueue(fault);
    const got = await viaRelay(relay, '/vendor-a/v1/responses', s.relayKey, { model: s.modelSlug, input: 'hi', stream: true });
    t.equal(got.status, 200);
    t.equal(got.text, fault.frames.join(''), 'the failed stream, byte for byte');
    const record = await usageRecord(relay, got.headers.get('x-request-id')!);
    t.equal(record.error_code, 'upstream_stream_error');
  });
  t.end();
});

t.test('no failover for a 400', async (t) => {
  const up = await fake();
  const keys = ['sk-400-one', 'sk-400-two'];
  const s = await seed(up.url, 'openai', keys);
  const body = openai.error("Invalid value for 'temperature': must be at most 2.", 'invalid_request_error', 'invalid_value', 'temperature');
  up.enqueue({ status: 400, body });
  const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, { ...chat(s.modelSlug), temperature: 9 });
  t.equal(got.status, 400);
  t.equal(got.text, JSON.stringify(body), 'the upstream error, unmodified');
  t.equal(up.count, 1, 'one attempt');
  const health = await hostKeyHealth(relay);
  for (const id of s.hostKeyIds) t.equal(health.get(id)!.state, 'healthy', 'a client error says nothing about the key');
});

t.test('translation routes fail over too (canonical caller, OpenAI upstream)', async (t) => {
  const up = await fake();
  const s = await seed(up.url, 'openai', ['sk-tr-one', 'sk-tr-two']);
  up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 5 }));
  const got = await viaRelay(relay, '/v1/generate', s.relayKey, { model: s.modelSlug, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  t.equal(got.status, 200, got.text);
  t.equal(up.count, 2);
  t.match(JSON.parse(got.text), { content: [{ type: 'text', text: String }] });

  up.script(() => faults.serverError({ vendor: 'openai', status: 502 }));
  const failed = await viaRelay(relay, '/v1/generate', s.relayKey, { model: s.modelSlug, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  t.equal(failed.status, 502, 'the last failure keeps its status');
  t.match(JSON.parse(failed.text), { error: { type: String, message: String } }, "rendered in the caller's (canonical) shape");
  t.notMatch(failed.text, /sk-tr/);
});

t.test('translated streams fail over on an early in-stream error too', async (t) => {
  t.test('canonical caller, Anthropic upstream: message_start then error', async (t) => {
    const up = await fake();
    const s = await seed(up.url, 'anthropic', ['sk-trs-one', 'sk-trs-two']);
    up.enqueue(faults.anthropicStreamError({ model: s.modelSlug }));
    const got = await viaRelay(relay, '/v1/generate', s.relayKey, { model: s.modelSlug, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    t.equal(got.status, 200);
    t.equal(up.count, 2, 'two attempts');
    const events = parseSse(got.text).map((f) => f.event);
    t.notOk(events.includes('error'), 'no error event reaches the client');
    t.equal(events.filter((e) => e === 'start').length, 1, 'one start');
    t.equal(events.at(-1), 'end');
  });
  t.test('Anthropic caller, OpenAI chat upstream: an error chunk after the role chunk', async (t) => {
    const up = await fake();
    const s = await seed(up.url, 'openai', ['sk-trc-one', 'sk-trc-two']);
    const role = openai.chatChunks({ model: s.modelSlug, chunks: 2 })[0]!;
    up.enqueue({ headers: { 'content-type': 'text/event-stream' }, frames: [role, `data: ${JSON.stringify({ error: { message: 'The server is overloaded.', type: 'server_error', code: null } })}\n\n`] });
    const got = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, { model: s.modelSlug, max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(got.status, 200);
    t.equal(up.count, 2, 'two attempts');
    const events = parseSse(got.text).map((f) => f.event);
    t.notOk(events.includes('error'), 'no error event reaches the client');
    t.equal(events.filter((e) => e === 'message_start').length, 1);
    t.equal(events.at(-1), 'message_stop');
  });
  t.test('Anthropic caller, OpenAI upstream 429 on the last key: Anthropic shape, retry-after kept', async (t) => {
    const up = await fake();
    const s = await seed(up.url, 'openai', ['sk-tr429']);
    up.enqueue(faults.rateLimit({ vendor: 'openai', retryAfter: 9 }));
    const got = await viaRelay(relay, '/vendor-b/v1/messages', s.relayKey, { model: s.modelSlug, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
    t.equal(got.status, 429);
    t.equal(got.headers.get('retry-after'), '9');
    const body = JSON.parse(got.text);
    t.match(body, { type: 'error', error: { type: 'rate_limit_error', message: /try again in 9s/ } });
  });
  t.end();
});
