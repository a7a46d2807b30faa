// The Chat Completions stream inspector: frames after the output has begun are parsed only when
// they carry an error or a usage object, and neither is missed, whatever the whitespace.
import t from 'tap';
import { chatStreamInspector } from '../../plugins/vendor-openai/codec/chat-inspector.ts';

const frame = (o: unknown) => JSON.stringify(o);

t.test('opening, output, usage and errors, with OpenAI\'s "usage":null on every chunk', async (t) => {
  const inspector = chatStreamInspector();
  t.equal(inspector.inspect(undefined, frame({ choices: [{ index: 0, delta: { role: 'assistant' } }], usage: null })), 'opening');
  t.equal(inspector.inspect(undefined, frame({ choices: [{ index: 0, delta: { content: 'Hi' } }], usage: null })), 'output');
  t.equal(inspector.inspect(undefined, frame({ choices: [{ index: 0, delta: { content: '"usage": {' } }], usage: null })), 'output', 'the words inside a string are read as JSON, not trusted');
  t.equal(inspector.usage(), null);
  t.equal(inspector.inspect(undefined, '{"choices":[],"usage" :\n {"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}'), 'output');
  t.match(inspector.usage(), { input_tokens: 3, output_tokens: 5 });
  t.equal(inspector.inspect(undefined, '[DONE]'), 'output');
});

t.test('an error after output is an error', async (t) => {
  const inspector = chatStreamInspector();
  inspector.inspect(undefined, frame({ choices: [{ index: 0, delta: { content: 'Hi' } }] }));
  t.equal(inspector.inspect(undefined, frame({ error: { message: 'overloaded', type: 'server_error' } })), 'error');
});
