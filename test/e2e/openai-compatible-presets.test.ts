// The presets for OpenAI-compatible servers (admin-ui/src/catalog/presets.ts, documented in
// plugins/vendor-openai/README.md), each seeded as the dashboard fills it and run against a fake
// that answers as that server does where it differs from OpenAI (test/support/fake-compatible.ts):
// the answer, the usage the client and the usage record get (Groq's x_groq.usage, DeepSeek's
// cache hits, usage in the last chunk), reasoning (vLLM's and DeepSeek's reasoning_content,
// OpenRouter's reasoning), OpenRouter's headers and keep-alive comments, and Responses clients
// translated through Chat Completions where the server has no /responses.
import t from 'tap';
import { seedRoute, startRelay } from '../../core/testing.ts';
import { UPSTREAM_PRESETS } from '../../admin-ui/src/catalog/presets.ts';
import { ANSWER_TEXT, CACHED, COMPLETION, PROMPT, REASONING_TEXT, compatibleScript, type CompatibleVendor } from '../support/fake-compatible.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { settled, usageRecord, viaRelay, type Answer } from '../support/relay-client.ts';
import { sdkFinalMessage } from '../support/anthropic-sdk-stream.ts';
import { sseFrames } from '../support/sse-frames.ts';

const relay = await startRelay({ database: 'pglite' });
t.teardown(() => relay.close());
const WITH_REASONING = new Set(['openrouter', 'deepseek', 'vllm']);

const recordOf = (got: Answer) => usageRecord(relay, got.headers.get('x-request-id')!);

for (const preset of UPSTREAM_PRESETS) {
  t.test(`${preset.label} preset`, async (t) => {
    const vendor = preset.id as CompatibleVendor;
    const basePath = new URL(preset.baseUrl).pathname;
    const up = await startFakeUpstream();
    t.teardown(() => up.close());
    up.script(compatibleScript(vendor, basePath));
    const seeded = await seedRoute(relay, { baseUrl: `${up.url}${basePath}`, adapter: preset.adapter, shapes: preset.shapes, model: `m-${vendor}`, upstreamModel: `${vendor}/model-1` });
    if (preset.headers) {
      const res = await relay.api('PUT', `/api/hosts/by-id/${seeded.hostId}`, { spec: { headers: preset.headers } });
      t.equal(res.status, 200, JSON.stringify(res.body));
    }
    await settled(relay, (s) => s.relayKeys.has(seeded.relayKeyId) && (!preset.headers || s.hosts.get(seeded.hostId)?.spec.headers !== undefined));
    const key = seeded.relayKey;
    const expected = { input_tokens: PROMPT, output_tokens: COMPLETION, cache_read_tokens: CACHED[vendor] };

    for (const stream of [false, true]) {
      const got = await viaRelay(relay, '/vendor-b/v1/messages', key, { model: seeded.modelSlug, stream, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
      t.equal(got.status, 200, `Anthropic client, stream ${stream}: ${got.text.slice(0, 200)}`);
      const message = stream ? await sdkFinalMessage(got.text) : JSON.parse(got.text);
      const text = (message.content as Array<{ type: string; text?: string }>).filter((p) => p.type === 'text').map((p) => p.text).join('');
      t.equal(text, ANSWER_TEXT, `stream ${stream}: the answer`);
      t.match(message.usage, { input_tokens: PROMPT - CACHED[vendor], cache_read_input_tokens: CACHED[vendor], output_tokens: COMPLETION }, `stream ${stream}: the client's usage`);
      t.match(await recordOf(got), { ...expected, upstream_shape: 'openai.chat' }, `stream ${stream}: the usage record`);
    }

    const passthrough = await viaRelay(relay, '/vendor-a/v1/chat/completions', key, {
      model: seeded.modelSlug, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }],
    });
    t.equal(passthrough.status, 200);
    t.match(await recordOf(passthrough), { input_tokens: PROMPT, output_tokens: COMPLETION, upstream_shape: 'openai.chat' }, 'passthrough stream: the usage record');
    if (vendor === 'openrouter') t.match(passthrough.text, /^: OPENROUTER PROCESSING/, "OpenRouter's keep-alive comments reach a passthrough client");

    const generated = await viaRelay(relay, '/v1/generate', key, { model: seeded.modelSlug, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    const reasoning = sseFrames(generated.text).map((f) => JSON.parse(f.data)).filter((e) => e.type === 'delta' && e.delta.type === 'reasoning').map((e) => e.delta.text).join('');
    t.equal(reasoning, WITH_REASONING.has(vendor) ? REASONING_TEXT : '', 'reasoning reaches a canonical client');

    const before = up.requests.length;
    const responses = await viaRelay(relay, '/vendor-a/v1/responses', key, { model: seeded.modelSlug, input: 'hi' });
    t.equal(responses.status, 200, `Responses client: ${responses.text.slice(0, 200)}`);
    t.same(up.requests.slice(before).map((r) => r.pathname), [`${basePath}/chat/completions`], 'a Responses client is translated through Chat Completions');
    const output = JSON.parse(responses.text) as { status: string; output: Array<{ type: string; content?: Array<{ type: string; text: string }> }> };
    t.equal(output.status, 'completed');
    t.equal(output.output.filter((o) => o.type === 'message').flatMap((o) => o.content ?? []).map((c) => c.text).join(''), ANSWER_TEXT, 'the answer in Responses output');

    const sent = up.requests.at(-1)!;
    t.equal(sent.headers.authorization, `Bearer ${'sk-upstream-'}${sent.headers.authorization?.slice('Bearer sk-upstream-'.length)}`, 'the host key as bearer');
    if (preset.headers) for (const [name, value] of Object.entries(preset.headers)) t.equal(sent.headers[name], value, `${name} header sent`);

    if (preset.shapes.includes('openai.embeddings')) {
      const embedded = await viaRelay(relay, '/vendor-a/v1/embeddings', key, { model: seeded.modelSlug, input: ['a', 'b'] });
      t.equal(embedded.status, 200);
      t.equal(up.requests.at(-1)!.pathname, `${basePath}/embeddings`);
    }
  });
}
