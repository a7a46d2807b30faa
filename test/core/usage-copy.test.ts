// UsageCopy: what passthrough keeps of a non-streamed answer to read its usage afterwards. Whole
// up to WHOLE_MAX_BYTES (then parsed whole if need be); past it only the last TAIL_BYTES, from
// which the OpenAI adapter's usage member is still read.
import t from 'tap';
import { TAIL_BYTES, UsageCopy, WHOLE_MAX_BYTES } from '../../core/pipeline/usage-copy.ts';
import { createOpenAIAdapter } from '../../plugins/vendor-openai/adapter.ts';
import { openai } from '../support/fake-upstream.ts';

const adapter = createOpenAIAdapter('openai');
const kept = (copy: UsageCopy) => (copy as unknown as { chunks: Buffer[] }).chunks.reduce((n, c) => n + c.length, 0);

function feed(body: Buffer, chunkSize: number): { copy: UsageCopy; maxKept: number } {
  const copy = new UsageCopy();
  let maxKept = 0;
  for (let i = 0; i < body.length; i += chunkSize) {
    copy.add(body.subarray(i, i + chunkSize));
    maxKept = Math.max(maxKept, kept(copy));
  }
  return { copy, maxKept };
}

t.test('a large answer: at most the whole bound plus a chunk is held, and usage comes from the tail', async (t) => {
  const body = Buffer.from(JSON.stringify(openai.embeddings({ model: 'm', inputs: 400, dimensions: 1536, inputTokens: 777 })));
  t.ok(body.length > WHOLE_MAX_BYTES);
  const { copy, maxKept } = feed(body, 64 * 1024);
  t.ok(maxKept <= WHOLE_MAX_BYTES + 64 * 1024, `held at most ${maxKept} bytes`);
  t.ok(kept(copy) < TAIL_BYTES + 64 * 1024, `${kept(copy)} bytes kept at the end`);
  t.match(copy.usage(adapter, 'openai.embeddings'), { input_tokens: 777 });
});

t.test('a small answer is kept whole: usage found even where the member cannot be read cheaply', async (t) => {
  const body = Buffer.from(JSON.stringify(openai.embeddings({ model: 'm', inputs: 2, inputTokens: 9 })));
  t.match(feed(body, 7).copy.usage(adapter, 'openai.embeddings'), { input_tokens: 9 });
  // usage first and a nested `usage` after it: topLevelMember refuses, the whole parse answers.
  const odd = Buffer.from(JSON.stringify({ usage: { prompt_tokens: 5, total_tokens: 5 }, object: 'list', data: [{ usage: { prompt_tokens: 1 } }] }));
  t.match(feed(odd, 5).copy.usage(adapter, 'openai.embeddings'), { input_tokens: 5 });
});

t.test('a large answer whose usage is not in its tail: no usage, no throw', async (t) => {
  const big = { usage: { prompt_tokens: 5, total_tokens: 5 }, data: 'x'.repeat(WHOLE_MAX_BYTES + 1) };
  t.equal(feed(Buffer.from(JSON.stringify(big)), 1 << 20).copy.usage(adapter, 'openai.embeddings'), null);
  t.equal(feed(Buffer.from('not json'), 3).copy.usage(adapter, 'openai.embeddings'), null);
});
