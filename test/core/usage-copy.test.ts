// UsageCopy: what passthrough keeps of a non-streamed answer to read its usage afterwards. Kept
// and parsed whole up to WHOLE_COPY_BYTES; past it only the first HEAD_BYTES and the last
// TAIL_BYTES are kept, and usage is read from there. Either way `usage` is looked for at the end first.
import t from 'tap';
import { HEAD_BYTES, TAIL_BYTES, UsageCopy, usageFromTail, WHOLE_COPY_BYTES } from '../../core/pipeline/usage-copy.ts';
import { createOpenAIAdapter } from '../../plugins/vendor-openai/adapter.ts';
import { openai } from '../support/fake-upstream.ts';

const adapter = createOpenAIAdapter('openai');

function feed(body: Buffer, chunkSize: number): UsageCopy {
  const copy = new UsageCopy();
  for (let i = 0; i < body.length; i += chunkSize) copy.add(body.subarray(i, i + chunkSize));
  return copy;
}

t.test('a large answer: only its start and end are kept, and usage is read from there', async (t) => {
  const body = Buffer.from(JSON.stringify(openai.embeddings({ model: 'm', inputs: 400, dimensions: 1536, inputTokens: 777 })));
  t.ok(body.length > WHOLE_COPY_BYTES);
  const copy = feed(body, 64 * 1024);
  t.notOk(copy.whole);
  t.ok(copy.heldBytes <= HEAD_BYTES + TAIL_BYTES + 64 * 1024, `${copy.heldBytes} bytes held of ${body.length}`);
  t.match(copy.usage(adapter, 'openai.embeddings'), { input_tokens: 777 });
  t.match(feed(body, body.length).usage(adapter, 'openai.embeddings'), { input_tokens: 777 }, 'an answer in one chunk (kept as it is) too');

  const first = { usage: { prompt_tokens: 5, total_tokens: 5, prompt_tokens_details: { cached_tokens: 0 } }, data: 'x'.repeat(WHOLE_COPY_BYTES + 1) };
  t.match(feed(Buffer.from(JSON.stringify(first)), 1 << 20).usage(adapter, 'openai.embeddings'), { input_tokens: 5 }, 'usage first, from the start');
  const nestedFirst = { meta: { usage: { prompt_tokens: 1 } }, usage: { prompt_tokens: 6, total_tokens: 6 }, data: 'x'.repeat(WHOLE_COPY_BYTES + 1) };
  t.match(feed(Buffer.from(JSON.stringify(nestedFirst)), 1 << 20).usage(adapter, 'openai.embeddings'), { input_tokens: 6 }, 'a nested usage before it is passed over');
  const inString = { note: 'a "usage": {"prompt_tokens": 9}, fake', data: 'x'.repeat(WHOLE_COPY_BYTES + 1) };
  t.equal(feed(Buffer.from(JSON.stringify(inString)), 1 << 20).usage(adapter, 'openai.embeddings'), null, 'inside a string: none');
  const middle = { data: 'x'.repeat(WHOLE_COPY_BYTES / 2), usage: { prompt_tokens: 5 }, more: 'y'.repeat(WHOLE_COPY_BYTES / 2 + TAIL_BYTES) };
  t.equal(feed(Buffer.from(JSON.stringify(middle)), 1 << 20).usage(adapter, 'openai.embeddings'), null, 'in the middle of a large answer: not read');
});

t.test('a small answer is parsed whole; a nested usage does not count', async (t) => {
  const body = Buffer.from(JSON.stringify(openai.embeddings({ model: 'm', inputs: 2, inputTokens: 9 })));
  t.match(feed(body, 7).usage(adapter, 'openai.embeddings'), { input_tokens: 9 });
  const odd = Buffer.from(JSON.stringify({ usage: { prompt_tokens: 5, total_tokens: 5 }, object: 'list', data: [{ usage: { prompt_tokens: 1 } }] }));
  t.match(feed(odd, 5).usage(adapter, 'openai.embeddings'), { input_tokens: 5 });
});

t.test('not JSON: no usage, no throw', async (t) => {
  t.equal(feed(Buffer.from('not json'), 3).usage(adapter, 'openai.embeddings'), null);
  t.equal(feed(Buffer.from(`{"data":"${'x'.repeat(WHOLE_COPY_BYTES)}`), 1 << 20).usage(adapter, 'openai.embeddings'), null);
});

t.test('usage read from the end of an answer: only a member of the outermost object counts', async (t) => {
  const read = (text: string) => usageFromTail(Buffer.from(text))?.value;
  t.same(read('{"data":[1,2],"usage":{"prompt_tokens":3}}'), { prompt_tokens: 3 }, 'the last member');
  t.same(read('{"usage":{"prompt_tokens":3},"service_tier":"default","system_fingerprint":"fp"}'), { prompt_tokens: 3 }, 'members after it');
  t.same(read('{"usage":{"n":1},"meta":{"usage":{"n":2}}}'), { n: 1 }, 'a nested key after it is passed over');
  t.same(read('{"usage":{"n":1},"data":[{"usage":{"n":2}}]}'), { n: 1 }, 'in an array too');
  t.same(read('{"usage":{"n":1},"usage":{"n":2}}'), { n: 2 }, 'a duplicate: the last wins, as with JSON.parse');
  t.equal(read('{"data":{"usage":{"n":2}}}'), undefined, 'only nested: none');
  t.equal(read('{"text":"he said \\"usage\\": 5"}'), undefined, 'inside a string: none');
  t.equal(read('{"text":"a \\"usage","x":{"y":1}}'), undefined, 'an escaped quote before the key: none');
  t.same(read('{"path":"C:\\\\","usage":{"n":4}}'), { n: 4 }, 'an escaped backslash before the quote does not escape it');
  t.equal(read('{"a":"usage","b":1}'), undefined, 'a value, not a key');
});

t.test('an adapter that reads another member gets the whole answer', async (t) => {
  const body = Buffer.from(JSON.stringify({ id: 'x', usageMetadata: { promptTokenCount: 7 }, usage: { prompt_tokens: 3 } }));
  const seen: unknown[] = [];
  const reader = { ...adapter, usageFromBody: (_shape: string, answer: unknown) => {
    const a = answer as Record<string, unknown>;
    seen.push(a.usage, a.id, Object.keys(a), 'usageMetadata' in a);
    return null;
  } };
  feed(body, 9).usage(reader, 'openai.chat');
  t.same(seen, [{ prompt_tokens: 3 }, 'x', ['id', 'usageMetadata', 'usage'], true]);
});

t.test('the members after usage are read with it: a Chat answer\'s service tier costs no whole parse', async (t) => {
  const answer = openai.chatCompletion({ model: 'm', inputTokens: 11 }) as Record<string, unknown>;
  answer.service_tier = 'priority';
  const body = JSON.stringify(answer);
  t.match(feed(Buffer.from(body), 13).usage(adapter, 'openai.chat'), { input_tokens: 11, price_modifiers: ['priority'] });
  // The text before `usage` broken: an answer parsed whole could not be read at all.
  const broken = Buffer.from(`{"id": [${body.slice(body.indexOf('"usage"'))}`);
  const seen: unknown[] = [];
  const reader = { ...adapter, usageFromBody: (_shape: string, a: unknown) => {
    seen.push((a as Record<string, unknown>).service_tier, 'service_tier' in (a as object));
    return null;
  } };
  feed(broken, 13).usage(reader, 'openai.chat');
  t.same(seen, ['priority', true]);
  t.match(feed(broken, 13).usage(adapter, 'openai.chat'), { input_tokens: 11, price_modifiers: ['priority'] });
});
