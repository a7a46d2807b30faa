// The usage-line encoder writes exactly the bytes of JSON.stringify and a newline, whatever the
// event holds: strings that need escaping, numbers that are not times, extras of every kind, and
// routes that change under the same relay key. Each line is read back out of a real LineArena.
import t from 'tap';
import type { UsageEvent } from '../../core/hooks.ts';
import { LineArena } from '../../core/observer/line-arena.ts';
import { UsageLineEncoder } from '../../core/observer/usage-line.ts';

/** An encoder and its arena: line(e) is the text appended for e, without its newline. */
class LineWriter {
  private readonly encoder = new UsageLineEncoder();
  readonly arena = new LineArena();

  line(e: UsageEvent): string {
    const bytes = this.encoder.append(e, this.arena);
    const text = Buffer.concat(this.arena.peek(bytes)).toString('utf8');
    this.arena.consume(bytes);
    if (!text.endsWith('\n')) throw new Error('the line does not end with a newline');
    return text.slice(0, -1);
  }
}

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

t.test('awkward strings in every string field', async (t) => {
  const writer = new LineWriter();
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
  const writer = new LineWriter();
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
  const writer = new LineWriter();
  const e = event({
    relay_key_id: null, relay_key_prefix: null, policy_id: null, model_requested: null, model_id: null, model_slug: null, host_id: null,
    host_key_id: null, provider_id: null, upstream_model: null, upstream_shape: null, cost: null, currency: null, ttfb_ms: null,
    stream: true, client_aborted: true,
  });
  t.equal(writer.line(e), JSON.stringify(e));
});

t.test('extras', async (t) => {
  const writer = new LineWriter();
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
  t.equal(writer.arena.size, 0, 'and nothing was appended');
});

/** An arena that checks every line stays within the room its encoder reserved. */
class CheckedArena extends LineArena {
  reserved = 0;
  widest = 0;
  override reserve(worst: number): Buffer {
    this.reserved = worst;
    return super.reserve(worst);
  }
  override commit(lineEnd: number): number {
    const bytes = super.commit(lineEnd);
    if (bytes > this.reserved) throw new Error(`a line of ${bytes} bytes in ${this.reserved} reserved`);
    this.widest = Math.max(this.widest, bytes / this.reserved);
    return bytes;
  }
}

t.test('every line fits the room reserved for it, and lines pile up across chunks intact', async (t) => {
  const encoder = new UsageLineEncoder();
  const arena = new CheckedArena();
  const worstUnit = '\u0001'; // six bytes escaped: the most any one UTF-16 unit takes
  const expected: string[] = [];
  const events: UsageEvent[] = [
    event(), event({ extras: { proxy_mode: 'true', originator: 'codex_cli_rs' } }),
    event({ request_id: worstUnit.repeat(256), started_at: worstUnit.repeat(300), finished_at: '\ud800'.repeat(100),
      error_code: worstUnit.repeat(50), currency: '"'.repeat(257), client: 'é'.repeat(1000),
      extras: { [worstUnit.repeat(20)]: worstUnit.repeat(300) }, latency_ms: -1.5e-300, ttfb_ms: Number.MIN_VALUE, cost: -Number.MAX_VALUE,
      input_tokens: -(2 ** 53), output_tokens: 1e21 + 1, status: -0.000001234 }),
    event({ extras: { nested: { deep: '\u0001'.repeat(1000) } as unknown as string } }),
    // Short strings, every number at its longest: the line is nearly all keys and numbers.
    event({
      request_id: '', started_at: '', finished_at: '', relay_key_id: null, relay_key_prefix: null, policy_id: null, model_requested: null,
      model_id: null, model_slug: null, host_id: null, host_key_id: null, provider_id: null, upstream_model: null, upstream_shape: null,
      ...Object.fromEntries(['status', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost',
        'latency_ms', 'ttfb_ms', 'attempts'].map((field) => [field, -1.2345678901234567e-300])),
    }),
  ];
  const largerThanAChunk = event({ client: '🚀'.repeat(300_000) });
  for (let i = 0; i < 4000; i++) {
    const e = i % 1000 === 999 ? largerThanAChunk : events[i % events.length]!;
    encoder.append(e, arena);
    expected.push(JSON.stringify(e) + '\n');
  }
  t.ok(arena.widest <= 1, `the fullest line used ${(arena.widest * 100).toFixed(0)}% of its room`);
  const text = Buffer.concat(arena.peek(arena.size)).toString('utf8');
  t.ok(text === expected.join(''), `4,000 lines over ${Math.ceil(arena.size / 2 ** 20)} MiB read back as JSON.stringify wrote them`);
});

t.test('route text kept per route is never written for another', async (t) => {
  const writer = new LineWriter();
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
