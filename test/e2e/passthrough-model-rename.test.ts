// Same-shape passthrough when the binding maps the model name (slug != upstreamModel): the upstream
// gets the client's bytes with only the top-level model value replaced, never a re-serialised body
// (which would turn "\u00e9" into "é", escape "</script>", reorder keys, drop whitespace).
import t from 'tap';
import { startRelay, seedRoute, eventually, DEFAULT_TEST_PLUGINS } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const relay = await startRelay({ plugins: [{ use: 'auth-proxy' }, ...DEFAULT_TEST_PLUGINS] });
const openaiUp = await startFakeUpstream();
const anthropicUp = await startFakeUpstream();
t.teardown(async () => {
  await relay.close();
  await openaiUp.close();
  await anthropicUp.close();
});

const oa = await seedRoute(relay, { baseUrl: `${openaiUp.url}/v1`, adapter: 'openai', model: 'gpt-alias', upstreamModel: 'gpt-real', hostKeys: ['sk-openai-host'] });
const an = await seedRoute(relay, { baseUrl: `${anthropicUp.url}/v1`, adapter: 'anthropic', model: 'claude-alias', upstreamModel: 'claude-real', hostKeys: ['sk-ant-host'] });
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 2);

/**
 * A body JSON.stringify would write differently: an escaped "é", "</script>", a number written
 * `1.0e0`, odd whitespace, and a nested "model" key both before and after the top-level one.
 */
const bodyWith = (model: string, extra = '') =>
  `{\n  "messages" : [ {"role":"user","content":"caf\\u00e9 </script> \\"model\\": \\"x\\"", "model": "nested"} ],\t"model":  ${model} ,`
  + `"metadata":{"model":"claude-alias"},\r\n "temperature": 1.0e0${extra} }\n`;

async function send(path: string, headers: Record<string, string>, body: string): Promise<number> {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  await res.arrayBuffer();
  return res.status;
}

t.test('chat completions, streamed and not: only the model value changes (and the usage request is added)', async (t) => {
  for (const stream of ['', ', "stream": true']) {
    const status = await send('/vendor-a/v1/chat/completions', { authorization: `Bearer ${oa.relayKey}` }, bodyWith('"gpt-alias"', stream));
    t.equal(status, 200);
    // A streamed chat asks the upstream for usage (vendor-openai's injectStreamUsage): one member added first.
    const expected = stream ? `{"stream_options":{"include_usage":true},${bodyWith('"gpt-real"', stream).slice(1)}` : bodyWith('"gpt-real"', stream);
    t.equal(openaiUp.lastRequest()!.body.toString(), expected, stream ? 'streamed' : 'not streamed');
  }
  // A client's own stream_options is set in place, its other members kept.
  const own = bodyWith('"gpt-alias"', ', "stream": true, "stream_options": {"include_obfuscation":false}');
  t.equal(await send('/vendor-a/v1/chat/completions', { authorization: `Bearer ${oa.relayKey}` }, own), 200);
  t.equal(openaiUp.lastRequest()!.body.toString(), bodyWith('"gpt-real"', ', "stream": true, "stream_options": {"include_obfuscation":false,"include_usage":true}'));
});

t.test('messages: only the model value changes', async (t) => {
  const status = await send('/vendor-b/v1/messages', { 'x-api-key': an.relayKey, 'anthropic-version': '2023-06-01' }, bodyWith('"claude-alias"', ', "max_tokens": 16'));
  t.equal(status, 200);
  t.equal(anthropicUp.lastRequest()!.body.toString(), bodyWith('"claude-real"', ', "max_tokens": 16'));
});

t.test('proxy mode (the client\'s own credential): only the model value changes', async (t) => {
  const headers = { 'x-gw-api-key': an.relayKey, 'x-gw-proxy-mode': '1', 'x-api-key': 'sk-client', 'anthropic-version': '2023-06-01' };
  const status = await send('/vendor-b/v1/messages', headers, bodyWith('"claude-alias"', ', "max_tokens": 16'));
  t.equal(status, 200);
  const received = anthropicUp.lastRequest()!;
  t.equal(received.headers['x-api-key'], 'sk-client', 'proxy mode was on');
  t.equal(received.body.toString(), bodyWith('"claude-real"', ', "max_tokens": 16'));
});

t.test('a top-level model written twice: refused (400), nothing forwarded', async (t) => {
  const before = openaiUp.count;
  const body = '{"model":"gpt-alias","messages":[{"role":"user","content":"hi"}],"model":"gpt-alias"}';
  t.equal(await send('/vendor-a/v1/chat/completions', { authorization: `Bearer ${oa.relayKey}` }, body), 400);
  t.equal(openaiUp.count, before);
});
