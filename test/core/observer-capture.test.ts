import t from 'tap';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { BodyCapture, buildCapturedPayload, completeUtf8Length } from '../../core/observer/capture.ts';
import { costFor, costOf } from '../../core/observer/cost.ts';
import { parseDuration, parseFilter, parseStatusFilter } from '../../core/observer/query-params.ts';
import type { Pricing } from '../../core/catalog/kinds.ts';

t.test('a request body over maxBytes is truncated and flagged', async (t) => {
  const body = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(500) }] }));
  const capture = new BodyCapture(100);
  capture.add(body);
  t.equal(capture.truncated, true);
  t.equal(capture.bytes().length, 100);
  t.equal(capture.text(), body.subarray(0, 100).toString());
  t.equal(capture.totalBytes, body.length);

  const small = new BodyCapture(100);
  small.add('{"a":1}');
  t.equal(small.truncated, false);
  t.equal(small.text(), '{"a":1}');

  const exact = new BodyCapture(7);
  exact.add('{"a":1}');
  t.equal(exact.truncated, false, 'a body of exactly maxBytes is not truncated');
});

t.test('a streamed response is captured as streamed, up to maxBytes, through a tap', async (t) => {
  const frames = Array.from({ length: 50 }, (_, i) => `data: {"delta":"chunk ${i}"}\n\n`);
  const capture = new BodyCapture(256);
  const received: Buffer[] = [];
  await pipeline(
    Readable.from(frames.map((f) => Buffer.from(f))),
    capture.tap(),
    new Writable({ write(chunk, _e, cb) { received.push(chunk); cb(); } }),
  );
  const all = frames.join('');
  t.equal(Buffer.concat(received).toString(), all, 'the tap passes every byte on unchanged');
  t.equal(capture.truncated, true);
  t.equal(capture.text(), all.slice(0, 256), 'the first maxBytes bytes, as streamed');

  const whole = new BodyCapture(1 << 20);
  for (const f of frames) whole.add(Buffer.from(f));
  t.equal(whole.text(), all);
  t.equal(whole.truncated, false);
});

t.test('truncation never cuts a UTF-8 character in half', async (t) => {
  const text = 'aé€😀';
  const bytes = Buffer.from(text);
  for (let cap = 0; cap <= bytes.length; cap++) {
    const capture = new BodyCapture(cap);
    capture.add(bytes);
    t.notMatch(capture.text(), /\uFFFD/, `cap ${cap}`);
    t.ok(text.startsWith(capture.text()));
  }
  t.equal(completeUtf8Length(Buffer.from('ab')), 2);
});

t.test('captured headers never include credentials', async (t) => {
  const request = new BodyCapture(10); request.add('{}');
  const response = new BodyCapture(10); response.add('{}');
  const payload = buildCapturedPayload({
    requestId: 'r1', request, response,
    requestHeaders: { authorization: 'Bearer rk_secret', 'x-api-key': 'sk-ant', 'X-GW-API-Key': 'rk', cookie: 'relay_session=1', 'content-type': 'application/json', 'x-codex-window-id': 'w' },
    responseHeaders: { 'set-cookie': 'a=b', 'content-type': 'application/json' },
  });
  t.same(payload.request_headers, { 'content-type': 'application/json', 'x-codex-window-id': 'w' });
  t.same(payload.response_headers, { 'content-type': 'application/json' });
  t.notMatch(JSON.stringify(payload), /secret|sk-ant|relay_session/);
  t.equal(payload.request_truncated, false);
});

t.test('cost from a pricing: cached input at its own rate', async (t) => {
  const usage = { input_tokens: 1_000_000, output_tokens: 500_000, cache_read_tokens: 400_000, cache_write_tokens: 0, reasoning_tokens: 100 };
  t.equal(costOf(usage, { inputPerMillion: 2, outputPerMillion: 8, cachedInputPerMillion: 0.5 }), 0.6 * 2 + 0.4 * 0.5 + 0.5 * 8);
  t.equal(costOf(usage, { inputPerMillion: 2, outputPerMillion: 8 }), 2 + 4, 'without a cached rate, cache reads cost input');
  const tokens = (n: number) => ({ ...usage, input_tokens: n, output_tokens: 0, cache_read_tokens: 0 });
  t.equal(costOf(tokens(15), { inputPerMillion: 0.1, outputPerMillion: 0 }), 0.000002, 'a cost is whole micro-units, rounded per request');
  t.equal(costOf(tokens(4), { inputPerMillion: 0.1, outputPerMillion: 0 }), 0, 'under half a micro-unit is nothing');
  t.equal(costOf(tokens(12_612), { inputPerMillion: 3, outputPerMillion: 0 }), 0.037836, 'no float noise: 12,612 tokens at 3 per million');
  const pricing = (id: string, hostId: string | undefined, input: number): Pricing => ({
    metadata: { id, slug: id, displayName: id, createdAt: '', updatedAt: '' },
    spec: { modelId: 'm1', ...(hostId ? { hostId } : {}), currency: 'EUR', inputPerMillion: input, outputPerMillion: 0 },
  });
  const pricings = [pricing('wide', undefined, 1), pricing('h2', 'h2', 3)];
  const u = { input_tokens: 1_000_000, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0 };
  t.same(costFor(u, pricings, 'm1', 'h2'), { cost: 3, currency: 'EUR' }, 'a host-specific pricing wins');
  t.same(costFor(u, pricings, 'm1', 'h1'), { cost: 1, currency: 'EUR' }, 'else the model-wide one');
  t.equal(costFor(u, pricings, 'm2', 'h1'), null);
  t.equal(costFor(u, pricings, null, null), null);
});

t.test('query parameters: status, since, from/to', async (t) => {
  t.same(parseStatusFilter('status', '200'), [{ op: 'eq', value: 200 }]);
  t.same(parseStatusFilter('status', '>=400'), [{ op: 'gte', value: 400 }]);
  t.same(parseStatusFilter('status', '>= 400'), [{ op: 'gte', value: 400 }]);
  t.same(parseStatusFilter('status', '>400'), [{ op: 'gt', value: 400 }]);
  t.same(parseStatusFilter('status', '<500'), [{ op: 'lt', value: 500 }]);
  t.same(parseStatusFilter('status', '4xx'), [{ op: 'gte', value: 400 }, { op: 'lt', value: 500 }]);
  t.throws(() => parseStatusFilter('status', 'bad'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'status' });
  t.equal(parseDuration('since', '30m'), 1800);
  t.equal(parseDuration('since', '7d'), 604800);
  t.throws(() => parseDuration('since', '7 days'), { code: 'RELAY_ERR_BAD_REQUEST', field: 'since' });
  const now = Date.parse('2026-03-01T00:00:00Z');
  t.same(parseFilter({ since: '24h' }, now).from, new Date('2026-02-28T00:00:00Z'));
  t.throws(() => parseFilter({ from: 'yesterday' }), { code: 'RELAY_ERR_BAD_REQUEST', field: 'from' });
  t.throws(() => parseFilter({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }), { code: 'RELAY_ERR_BAD_REQUEST', field: 'to' });
  t.throws(() => parseFilter({ since: '1h', from: '2026-03-01T00:00:00Z' }), { code: 'RELAY_ERR_BAD_REQUEST', field: 'since' });
});
