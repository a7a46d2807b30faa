// Host and host-key circuits (DESIGN.md "Health and states", issue 37): an upstream 5xx, timeout
// or refused connection says something about the host, so one failing request never takes a
// shared key away; only a run of failures within a window opens a circuit, and a half-open
// probe's success closes it. A 4xx the caller's body causes never counts.
import t from 'tap';
import { startRelay, seedRoute, eventually, type Seeded, type TestRelay } from '../../core/testing.ts';
import { startFakeUpstream, faults, openai, refusingUrl, type FakeUpstream } from '../support/fake-upstream.ts';
import { viaRelay, hostKeyHealth, settled, routeLive } from '../support/relay-client.ts';

const BREAKER = { failures: 3, windowMs: 10_000, openMs: 1_000 };
const relay = await startRelay({ config: { health: { circuitBreaker: BREAKER } } });
const upstreams: FakeUpstream[] = [];
t.teardown(async () => {
  await relay.close();
  await Promise.all(upstreams.map((u) => u.close()));
});

async function fake(): Promise<FakeUpstream> {
  const up = await startFakeUpstream();
  upstreams.push(up);
  return up;
}

let seq = 0;
async function seed(on: TestRelay, up: FakeUpstream, keys: string[]): Promise<Seeded> {
  const s = await seedRoute(on, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: `breaker-${++seq}`, hostKeys: keys });
  await settled(on, (snap) => snap.relayKeys.has(s.relayKeyId) && snap.hostKeysOfHost(s.hostId).length === keys.length);
  return s;
}

const chat = (model: string, content = 'hi') => ({ model, messages: [{ role: 'user', content }] });
const bearer = (up: FakeUpstream, i: number) => String(up.requests[i]!.headers.authorization).replace(/^Bearer /, '');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('the attack: a caller who makes the upstream answer 500 once a second does not take the shared key away (default settings)', async (t) => {
  const defaults = await startRelay();
  t.teardown(() => defaults.close());
  const up = await fake();
  // The upstream fails only the attacker's body; everyone shares the one host key.
  up.script((req) => ((req.json as { messages?: Array<{ content?: unknown }> })?.messages?.[0]?.content === 'boom' ? faults.serverError({ vendor: 'openai', status: 500 }) : undefined));
  const s = await seed(defaults, up, ['sk-shared-by-all']);
  let attacking = true;
  const attacks: number[] = [];
  const attacker = (async () => {
    for (let i = 0; i < 8; i++) {
      attacks.push((await viaRelay(defaults, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug, 'boom'))).status);
      await sleep(1_000);
    }
    attacking = false;
  })();
  const others: number[] = [];
  const other = async () => {
    while (attacking) {
      others.push((await viaRelay(defaults, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status);
      await sleep(150);
    }
  };
  await Promise.all([attacker, other(), other()]);
  t.same([...new Set(attacks)], [500], "the attacker gets the upstream's 500 each time");
  t.ok(others.length > 40, `the other callers kept asking (${others.length} requests)`);
  t.same(others.filter((status) => status !== 200), [], 'every request of the other callers was served');
  t.equal((await hostKeyHealth(defaults)).get(s.hostKeyIds[0]!)?.state, 'healthy', 'the key stayed in rotation');
});

t.test('a run of 5xx opens the host circuit; a failed probe reopens it; a successful probe closes it', async (t) => {
  const up = await fake();
  const keys = ['sk-run-one', 'sk-run-two'];
  const s = await seed(relay, up, keys);
  up.script(() => faults.serverError({ vendor: 'openai', status: 503 }));

  // Each request tries both keys of the host: two host failures per request, one per key.
  const first = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(first.status, 503, "the last key's 503 passes through");
  t.equal(up.count, 2);
  let health = await hostKeyHealth(relay);
  for (const id of s.hostKeyIds) t.equal(health.get(id)?.state, 'healthy', 'two failures (of 3) leave the host in rotation');

  const second = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(up.count, 3, 'the third failure in a row opened the host circuit: the other key was not tried');
  t.equal(second.status, 503);
  t.match(JSON.parse(second.text), { error: { code: 'RELAY_ERR_NO_HEALTHY_KEY', message: /circuit/ } });
  health = await hostKeyHealth(relay);
  for (const id of s.hostKeyIds) {
    t.equal(health.get(id)?.state, 'open', "every key of the host is out of rotation while the host's circuit is open");
    t.match(health.get(id)?.reason, /host's circuit: 3 failures in a row/);
  }

  const refused = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(up.count, 3, 'while open, nothing reaches the upstream');
  t.equal(refused.status, 503);
  t.match(JSON.parse(refused.text), { error: { code: 'RELAY_ERR_NO_HEALTHY_KEY', message: /failed repeatedly \(circuit open\); try again in 1s/ } });
  t.equal(refused.headers.get('retry-after'), '1');

  await eventually(async () => (await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state === 'half-open', 3_000, 50);
  const failedProbe = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(up.count, 4, 'half-open: exactly one probe reached the upstream');
  t.equal(failedProbe.status, 503);
  health = await hostKeyHealth(relay);
  for (const id of s.hostKeyIds) t.equal(health.get(id)?.state, 'open');
  t.ok(s.hostKeyIds.some((id) => /host's circuit: the half-open probe failed/.test(health.get(id)?.reason ?? '')), 'the failed probe reopened the host circuit');

  up.script(undefined); // the upstream recovers
  await eventually(async () => (await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state === 'half-open', 3_000, 50);
  const probe = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(probe.status, 200, 'the probe is served');
  t.equal(up.count, 5);
  health = await hostKeyHealth(relay);
  for (const id of s.hostKeyIds) t.notMatch(health.get(id)?.reason ?? '', /host's circuit/, "the probe's success closed the host circuit");
  // A key whose own run reached 3 meanwhile (the probe's failure counted for it too) is probed when next tried.
  for (let i = 0; i < 20 && [...(await hostKeyHealth(relay)).values()].some((h) => s.hostKeyIds.includes(h.hostKeyId) && h.state !== 'healthy'); i++) {
    t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status, 200);
  }
  health = await hostKeyHealth(relay);
  for (const id of s.hostKeyIds) t.equal(health.get(id)?.state, 'healthy', 'every key is back in rotation');
});

t.test('a half-open circuit lets one probe through while others wait', async (t) => {
  const up = await fake();
  const s = await seed(relay, up, ['sk-probe-only']);
  up.script(() => faults.serverError({ vendor: 'openai', status: 500 }));
  for (let i = 0; i < 3; i++) await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'open');
  await eventually(async () => (await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state === 'half-open', 3_000, 50);
  // The probe is held by the upstream for a moment; requests meanwhile are refused, not sent.
  up.script(async () => {
    await sleep(300);
    return undefined;
  });
  const seen = up.count;
  const [probe, waiting] = await Promise.all([
    viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug)),
    sleep(50).then(() => viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))),
  ]);
  t.equal(probe.status, 200, 'the probe is served');
  t.equal(waiting.status, 503, 'the request during the probe is refused');
  t.equal(waiting.headers.get('retry-after'), '1');
  t.equal(up.count, seen + 1, 'one request reached the upstream');
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'healthy');
});

t.test('a probe answered with a 4xx (the caller\'s error) decides nothing: the next request probes', async (t) => {
  const up = await fake();
  const s = await seed(relay, up, ['sk-probe-4xx']);
  up.script(() => faults.serverError({ vendor: 'openai', status: 500 }));
  for (let i = 0; i < 3; i++) await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  await eventually(async () => (await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state === 'half-open', 3_000, 50);
  up.script(() => ({ status: 400, body: openai.error("Invalid value for 'temperature'", 'invalid_request_error', 'invalid_value', 'temperature') }));
  t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status, 400, "the probe's 400 reaches its caller");
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'half-open', 'still half-open, the probe released');
  up.script(undefined);
  t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status, 200, 'the next request is the probe, and is served');
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'healthy');
});

t.test('refused connections count toward the host circuit too', async (t) => {
  const s = await seedRoute(relay, { baseUrl: `${await refusingUrl()}/v1`, adapter: 'openai', model: `breaker-${++seq}`, hostKeys: ['sk-refused'] });
  await routeLive(relay, s);
  for (let i = 0; i < 3; i++) {
    const got = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
    t.equal(got.status, 502, `attempt ${i + 1}: the upstream could not be reached`);
    if (i < 2) t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'healthy', `after ${i + 1}: still in rotation`);
  }
  t.match((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!), { state: 'open', reason: /could not be reached/ });
  const refused = await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal(refused.status, 503, 'then the circuit refuses at once');
  t.equal(refused.headers.get('retry-after'), '1');
});

t.test("a run of failures on one key opens that key's circuit only; the host's other key serves", async (t) => {
  const up = await fake();
  const keys = ['sk-bad-key', 'sk-good-key'];
  const s = await seed(relay, up, keys);
  await relay.api('PUT', `/api/host-keys/by-id/${s.hostKeyIds[1]}`, { spec: { weight: 1 } });
  await settled(relay, (snap) => snap.hostKeys.get(s.hostKeyIds[1]!)?.spec.weight === 1);
  // The first key (weight 1000) is nearly always tried first; the upstream fails only with it.
  up.script((req) => (String(req.headers.authorization) === 'Bearer sk-bad-key' ? faults.serverError({ vendor: 'openai', status: 502 }) : undefined));
  for (let i = 0; i < 20 && (await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state !== 'open'; i++) {
    t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status, 200, 'served by the other key');
  }
  const health = await hostKeyHealth(relay);
  t.match(health.get(s.hostKeyIds[0]!), { state: 'open', reason: /^3 failures in a row within 10s, the last: upstream answered 502/ });
  t.equal(health.get(s.hostKeyIds[1]!)?.state, 'healthy', 'the successes on the other key keep the host closed');
  const seen = up.count;
  t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status, 200);
  t.equal(up.count, seen + 1, 'one attempt: the open key is skipped');
  t.equal(bearer(up, up.count - 1), 'sk-good-key');
});

t.test("a 4xx the caller's body causes never counts, however many", async (t) => {
  const up = await fake();
  const s = await seed(relay, up, ['sk-caller-errors']);
  for (const status of [400, 404, 413, 422]) {
    up.script(() => ({ status, body: openai.error(`fake ${status}`, 'invalid_request_error', null) }));
    for (let i = 0; i < BREAKER.failures + 1; i++) {
      t.equal((await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug))).status, status, `${status} passes through`);
    }
    t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'healthy', `${status} x${BREAKER.failures + 1}: the key stays healthy`);
  }
  // Nor do they break a run of 5xx into pieces that each look harmless: the run still needs its 3 failures.
  up.script(() => faults.serverError({ vendor: 'openai', status: 500 }));
  await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'healthy', 'two 5xx: still closed');
  await viaRelay(relay, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal((await hostKeyHealth(relay)).get(s.hostKeyIds[0]!)?.state, 'open', 'the third opens it');
});

t.test('failures older than the window do not add up', async (t) => {
  const short = await startRelay({ config: { health: { circuitBreaker: { failures: 2, windowMs: 400, openMs: 1_000 } } } });
  t.teardown(() => short.close());
  const up = await fake();
  up.script(() => faults.serverError({ vendor: 'openai', status: 500 }));
  const s = await seedRoute(short, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'breaker-window', hostKeys: ['sk-window'] });
  await routeLive(short, s);
  for (let i = 0; i < 3; i++) {
    await viaRelay(short, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
    await sleep(600);
  }
  t.equal(up.count, 3, 'every request reached the upstream');
  t.equal((await hostKeyHealth(short)).get(s.hostKeyIds[0]!)?.state, 'healthy', 'failures 600 ms apart never make a run of 2 within 400 ms');
  await viaRelay(short, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  await viaRelay(short, '/vendor-a/v1/chat/completions', s.relayKey, chat(s.modelSlug));
  t.equal((await hostKeyHealth(short)).get(s.hostKeyIds[0]!)?.state, 'open', 'two within the window do');
});
