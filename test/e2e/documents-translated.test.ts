// Files and PDFs through translation (issue 44 item 2): each inbound shape's file part arrives at
// each upstream shape as that shape's document, and a part an upstream cannot take is a 400 in the
// client's shape that names the part and the model. Fake upstreams record what they receive.
import t from 'tap';
import { startRelay, seedRoute, eventually } from '../../core/testing.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';

const relay = await startRelay();
const up = await startFakeUpstream();
t.teardown(async () => { await relay.close(); await up.close(); });

const toAnthropic = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'anthropic', model: 'doc-claude' });
const toOpenAI = await seedRoute(relay, { baseUrl: `${up.url}/v1`, adapter: 'openai', model: 'doc-gpt', shapes: ['openai.chat'] });
await eventually(() => relay.relay.sync.snapshot().relayKeys.size >= 2);

const PDF = Buffer.from('%PDF-1.4 relay test').toString('base64');

async function post(path: string, key: string, body: unknown) {
  const res = await fetch(`${relay.inferenceUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() as any };
}

t.test('a Chat file part reaches Anthropic as a base64 document with its file name as title', async (t) => {
  const got = await post('/vendor-a/v1/chat/completions', toAnthropic.relayKey, {
    model: 'doc-claude', messages: [{ role: 'user', content: [{ type: 'text', text: 'summarise' }, { type: 'file', file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` } }] }],
  });
  t.equal(got.status, 200);
  const sent = up.lastRequest()!.json;
  // The last block of the last message carries the prompt-cache breakpoint (vendor-anthropic's cacheTranslated).
  t.same(sent.messages[0].content[1], { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'report.pdf', cache_control: { type: 'ephemeral' } });
});

t.test('a Responses input_file by URL reaches Anthropic as a URL document', async (t) => {
  const got = await post('/vendor-a/v1/responses', toAnthropic.relayKey, {
    model: 'doc-claude', input: [{ role: 'user', content: [{ type: 'input_text', text: 'read' }, { type: 'input_file', file_url: 'https://example.com/a.pdf' }] }],
  });
  t.equal(got.status, 200);
  t.same(up.lastRequest()!.json.messages[0].content[1], { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' }, cache_control: { type: 'ephemeral' } });
});

t.test('a Messages document reaches a Chat upstream as a file part, and a text document as text', async (t) => {
  const got = await post('/vendor-b/v1/messages', toOpenAI.relayKey, {
    model: 'doc-gpt', max_tokens: 32, messages: [{ role: 'user', content: [
      { type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
      { type: 'text', text: 'compare' },
    ] }],
  });
  t.equal(got.status, 200);
  t.same(up.lastRequest()!.json.messages[0].content, [
    { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' } },
    { type: 'text', text: 'plain notes' },
    { type: 'text', text: 'compare' },
  ]);
});

t.test('a document URL into Chat Completions is a 400 in Anthropic\'s shape naming the part and the model', async (t) => {
  const before = up.count;
  const got = await post('/vendor-b/v1/messages', toOpenAI.relayKey, {
    model: 'doc-gpt', max_tokens: 32, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }] }],
  });
  t.equal(got.status, 400);
  t.equal(got.body.type, 'error');
  t.equal(got.body.error.type, 'invalid_request_error');
  t.match(got.body.error.message, /document URL/);
  t.match(got.body.error.message, /doc-gpt/);
  t.equal(up.count, before, 'nothing reached the upstream');
});

t.test('audio into Messages is a 400 in OpenAI\'s shape naming the part and the model', async (t) => {
  const got = await post('/vendor-a/v1/chat/completions', toAnthropic.relayKey, {
    model: 'doc-claude', messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }],
  });
  t.equal(got.status, 400);
  t.match(got.body.error, { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', type: 'invalid_request_error', message: /doc-claude.*input_audio/ });
});

t.test('an OpenAI file id cannot reach Anthropic: a 400, not a silent drop', async (t) => {
  const got = await post('/vendor-a/v1/responses', toAnthropic.relayKey, {
    model: 'doc-claude', input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-abc123' }] }],
  });
  t.equal(got.status, 400);
  t.match(got.body.error, { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /file-abc123/ });
});

for (const [what, part, named] of [
  ['an image file source', { type: 'image', source: { type: 'file', file_id: 'file_011' } }, /image file source/],
  ['a document file source', { type: 'document', source: { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } }, /document file source.*Anthropic's store/],
  ['a search_result block', { type: 'search_result', source: 'https://example.com', title: 'r', content: [{ type: 'text', text: 'x' }] }, /search_result/],
] as const) {
  t.test(`${what} is refused on a translated route, not dropped`, async (t) => {
    const got = await post('/vendor-b/v1/messages', toOpenAI.relayKey, { model: 'doc-gpt', max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, part] }] });
    t.equal(got.status, 400);
    t.match(got.body.error.message, named);
    t.match(got.body.error.message, /doc-gpt/);
  });
}

t.test('an input_file inside Responses also refuses unknown content parts rather than dropping them', async (t) => {
  const got = await post('/vendor-a/v1/responses', toAnthropic.relayKey, { model: 'doc-claude', input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }] });
  t.equal(got.status, 400);
  t.match(got.body.error, { code: 'RELAY_ERR_CONTENT_UNSUPPORTED', message: /input_audio/ });
});
