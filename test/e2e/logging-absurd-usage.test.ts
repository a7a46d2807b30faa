// An upstream that reports an absurd token count (1e20 prompt tokens) costs its own record no more
// than a bounded count: the record is written to log-postgres, and the records after it are written
// too (the count used to fail the batch insert, which was retried for minutes and then dropped with
// every record queued behind it). The count is bounded at MAX_TOKEN_COUNT, which no request uses: the
// record carries the prompt as counted or estimated instead, flagged (unreadable-usage.test.ts).
import t from 'tap';
import { DEFAULT_TEST_PLUGINS, eventually, seedRoute, startRelay } from '../../core/testing.ts';
import { MAX_TOKEN_COUNT } from '../../core/plugin-api/canonical.ts';
import { openai, startFakeUpstream } from '../support/fake-upstream.ts';
import { usageRecord, viaRelay } from '../support/relay-client.ts';

const upstream = await startFakeUpstream();
const relay = await startRelay({ database: 'pglite', plugins: [...DEFAULT_TEST_PLUGINS, { use: 'log-postgres' }] });
t.teardown(async () => {
  await relay.close();
  await upstream.close();
});
const route = await seedRoute(relay, { baseUrl: `${upstream.url}/v1`, adapter: 'openai', model: 'model-a' });

async function chat(usage: object): Promise<string> {
  // By path: the prompt of an unreadable count is asked of the counter on the same upstream.
  upstream.enqueue({ body: { ...openai.chatCompletion({ model: 'model-a', text: 'hi' }), usage } }, { path: '/v1/chat/completions' });
  const res = await viaRelay(relay, '/vendor-a/v1/chat/completions', route.relayKey, { model: 'model-a', messages: [{ role: 'user', content: 'hi' }] });
  return res.headers.get('x-request-id')!;
}

t.test('1e20 prompt tokens: recorded bounded, and the next record is written', async (t) => {
  t.equal((await relay.api('PUT', '/api/settings/usage-logging', { backend: 'postgres' })).status, 200);
  await eventually(() => relay.relay.settings.get('usage-logging').backend === 'postgres');
  const absurd = await chat({ prompt_tokens: 1e20, completion_tokens: 2.6 });
  const next = await chat({ prompt_tokens: 3, completion_tokens: 2 });
  const record = await usageRecord(relay, absurd);
  t.match(record, { output_tokens: 3, extras: { usage_unreadable: 'input' } }, 'the output a whole number; the prompt not read');
  t.ok(record.input_tokens < MAX_TOKEN_COUNT, `the prompt as counted or estimated: ${record.input_tokens}`);
  t.match(await usageRecord(relay, next), { input_tokens: 3, output_tokens: 2 });
});
