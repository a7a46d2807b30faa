// UsageCopy: what passthrough keeps of a non-streamed answer to read its usage afterwards. Parsed
// whole up to WHOLE_PARSE_BYTES; past it only the top-level `usage` member is read (through the
// request scanner), wherever it lies.
import t from 'tap';
import { UsageCopy, WHOLE_PARSE_BYTES } from '../../core/pipeline/usage-copy.ts';
import { createOpenAIAdapter } from '../../plugins/vendor-openai/adapter.ts';
import { openai } from '../support/fake-upstream.ts';

const adapter = createOpenAIAdapter('openai');

function feed(body: Buffer, chunkSize: number): UsageCopy {
  const copy = new UsageCopy();
  for (let i = 0; i < body.length; i += chunkSize) copy.add(body.subarray(i, i + chunkSize));
  return copy;
}

t.test('a large answer: usage read from its top-level member', async (t) => {
  const body = Buffer.from(JSON.stringify(openai.embeddings({ model: 'm', inputs: 400, dimensions: 1536, inputTokens: 777 })));
  t.ok(body.length > WHOLE_PARSE_BYTES);
  t.match(feed(body, 64 * 1024).usage(adapter, 'openai.embeddings'), { input_tokens: 777 });
  const first = { usage: { prompt_tokens: 5, total_tokens: 5 }, data: 'x'.repeat(WHOLE_PARSE_BYTES + 1) };
  t.match(feed(Buffer.from(JSON.stringify(first)), 1 << 20).usage(adapter, 'openai.embeddings'), { input_tokens: 5 }, 'usage first, too');
});

t.test('a small answer is parsed whole; a nested usage does not count', async (t) => {
  const body = Buffer.from(JSON.stringify(openai.embeddings({ model: 'm', inputs: 2, inputTokens: 9 })));
  t.match(feed(body, 7).usage(adapter, 'openai.embeddings'), { input_tokens: 9 });
  const odd = Buffer.from(JSON.stringify({ usage: { prompt_tokens: 5, total_tokens: 5 }, object: 'list', data: [{ usage: { prompt_tokens: 1 } }] }));
  t.match(feed(odd, 5).usage(adapter, 'openai.embeddings'), { input_tokens: 5 });
});

t.test('not JSON: no usage, no throw', async (t) => {
  t.equal(feed(Buffer.from('not json'), 3).usage(adapter, 'openai.embeddings'), null);
  t.equal(feed(Buffer.from(`{"data":"${'x'.repeat(WHOLE_PARSE_BYTES)}`), 1 << 20).usage(adapter, 'openai.embeddings'), null);
});
