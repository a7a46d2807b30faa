// The usage-line writer writes exactly what JSON.stringify writes, whatever the event holds:
// strings that need escaping, numbers that are not times, extras of every kind, and routes that
// change under the same relay key.
import t from 'tap';
import type { UsageEvent } from '../../core/hooks.ts';
import { UsageLineWriter, jsonString } from '../../core/observer/usage-line.ts';

function event(overrides: Partial<UsageEvent> = {}): UsageEvent {
  return {
    request_id: '7d9f2c1e-5b7a-4c1e-9a51-0e4f3a2b1c0d', started_at: '2026-11-21T11:05:07.123Z', finished_at: '2026-11-21T11:05:07.125Z',
    relay_key_id: 'key-1', relay_key_prefix: 'rk_ab12cd', policy_id: 'policy-1', model_requested: 'gpt-4.1-mini',
    model_id: 'model-1', model_slug: 'gpt-4.1-mini', host_id: 'host-1', host_key_id: 'hk-1', provider_id: 'provider-1',
    upstream_model: 'gpt-4.1-mini', inbound_shape: 'openai.chat', upstream_shape: 'openai.chat', status: 200, error_code: null,
    stream: false, input_tokens: 12, output_tokens: 20, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0,
    cost: 0.0000123, currency: 'USD', latency_ms: 1.234, ttfb_ms: null, attempts: 1, client_aborted: false, client: null, extras: {},
    ...overrides,
  };
}

const AWKWARD_STRINGS = [
  '', 'plain', 'quote " inside', 'back\\slash', 'new\nline', 'tab\t', '\u0000\u001f', '\u007f', 'caf\u00e9', '\u{1f600}', '\ud800 lone',
  '\udc00', '</script>', 'x'.repeat(256), 'x'.repeat(257), `${'y'.repeat(300)}"`,
];
const AWKWARD_NUMBERS = [
  0, -0, 1, -1, 0.1, 0.3, 0.1 + 0.2, 1.05, 1.5, 12.345, 0.001, 0.0005, 1e-7, 123456789.123, 999999999999.999, 1e12 + 0.5, 1e21, 1e300,
  -1.234, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, Number.MIN_VALUE,
];

t.test('jsonString quotes as JSON.stringify does', async (t) => {
  for (const s of AWKWARD_STRINGS) t.equal(jsonString(s), JSON.stringify(s), JSON.stringify(s).slice(0, 40));
});

t.test('awkward strings in every string field', async (t) => {
  const writer = new UsageLineWriter();
  const fields = ['request_id', 'relay_key_id', 'relay_key_prefix', 'policy_id', 'model_requested', 'model_id', 'model_slug', 'host_id',
    'host_key_id', 'provider_id', 'upstream_model', 'inbound_shape', 'upstream_shape', 'error_code', 'currency', 'client'] as const;
  for (const field of fields) {
    for (const s of AWKWARD_STRINGS) {
      const e = event({ [field]: s });
      t.equal(writer.line(e), JSON.stringify(e), `${field} = ${JSON.stringify(s).slice(0, 30)}`);
    }
  }
});

t.test('numbers: times, costs and whatever else a field may hold', async (t) => {
  const writer = new UsageLineWriter();
  for (const n of AWKWARD_NUMBERS) {
    for (const field of ['latency_ms', 'ttfb_ms', 'cost', 'input_tokens', 'status'] as const) {
      const e = event({ [field]: n });
      t.equal(writer.line(e), JSON.stringify(e), `${field} = ${n}`);
    }
  }
  // Every latency Relay writes: rounded to the microsecond.
  let mismatches = 0;
  for (let i = 0; i < 200_000; i++) {
    const ms = Math.round(Math.random() * 10 ** (1 + (i % 7)) * 1000) / 1000;
    const e = event({ latency_ms: ms, ttfb_ms: ms / 3 });
    if (writer.line(e) !== JSON.stringify(e)) mismatches++;
  }
  t.equal(mismatches, 0, '200,000 random latencies');
});

t.test('nulls and booleans', async (t) => {
  const writer = new UsageLineWriter();
  const e = event({
    relay_key_id: null, relay_key_prefix: null, policy_id: null, model_requested: null, model_id: null, model_slug: null, host_id: null,
    host_key_id: null, provider_id: null, upstream_model: null, upstream_shape: null, cost: null, currency: null, ttfb_ms: null,
    stream: true, client_aborted: true,
  });
  t.equal(writer.line(e), JSON.stringify(e));
});

t.test('extras', async (t) => {
  const writer = new UsageLineWriter();
  const inherited = Object.create({ inherited: 'no' }) as Record<string, string>;
  inherited.own = 'yes';
  const cases: Array<Record<string, string>> = [
    {}, { proxy_mode: 'true' }, { 'session-id': 'abc', 'thread-id': 'def', originator: 'codex_cli_rs' },
    { 'key "quoted"': 'value\nwith newline', '\u00e9': '\u{1f600}' }, inherited,
    { n: 5 as unknown as string }, { nested: { a: 1 } as unknown as string }, { u: undefined as unknown as string },
  ];
  for (const extras of cases) {
    const e = event({ extras });
    t.equal(writer.line(e), JSON.stringify(e), JSON.stringify(extras));
  }
  t.throws(() => writer.line(event({ extras: { big: 1n as unknown as string } })), TypeError, 'a BigInt throws, as in JSON.stringify');
});

t.test('route text kept per route is never written for another', async (t) => {
  const writer = new UsageLineWriter();
  const variants: Array<Partial<UsageEvent>> = [
    {}, { model_slug: 'other-slug' }, { host_key_id: 'hk-2' }, { host_key_id: null }, { upstream_shape: 'anthropic.messages' },
    { relay_key_id: 'key-2', policy_id: 'policy-2' }, { model_requested: 'other-model' }, { inbound_shape: 'openai.responses' },
    { relay_key_prefix: 'rk_other' }, { provider_id: 'provider-2' }, { upstream_model: 'other-upstream' }, { host_id: 'host-2', host_key_id: null },
  ];
  for (let round = 0; round < 3; round++) {
    for (const variant of variants) {
      const e = event(variant);
      t.equal(writer.line(e), JSON.stringify(e), `round ${round}: ${JSON.stringify(variant)}`);
    }
  }
  // More routes than are kept: the cache starts over and stays right.
  let mismatches = 0;
  for (let i = 0; i < 3000; i++) {
    const e = event({ relay_key_id: `key-${i % 1500}`, model_slug: `slug-${i % 7}` });
    if (writer.line(e) !== JSON.stringify(e)) mismatches++;
  }
  t.equal(mismatches, 0, '3,000 events over 1,500 relay keys');
});
